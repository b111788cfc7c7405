"""One attempt with the agent's tree apart from the project (a `--parallel N` slot's worktree,
docs/parallel.md): the agent runs, is prompted about and is checkpointed in its tree; aidd's
log, prompt file and events stay in the project."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

from aidd.config import Actions, load_settings
from aidd.console import Console
from aidd.events import EventLog
from aidd.project.paths import ProjectPaths
from aidd.run.iteration import IterationRunner
from aidd.run.journal import Journal
from aidd.run.phases import Phase, PhaseKind, PhaseState
from aidd.run.preflight import prepare_run
from aidd.run.signals import Interrupt
from tests.conftest import FAKES
from tests.fakes.clock import FakeClock
from tests.fakes.session import FakeSession, success


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={"PATH": "/usr/bin:/bin", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
                        "HOME": str(root)})


def test_the_agent_works_in_its_tree_and_aidd_writes_in_the_project(tmp_path: Path) -> None:
    project, tree = ProjectPaths(tmp_path / "proj"), ProjectPaths(tmp_path / "tree")
    for paths in (project, tree):
        paths.automaker.mkdir(parents=True)
        paths.app_spec.write_text("# Shop\n")
        (paths.root / "README.md").write_text("readme\n")
        _git(paths.root, "init", "-q")
        _git(paths.root, "add", "-A")
        _git(paths.root, "commit", "-qm", "start")
    clock = FakeClock()
    environ = {"PATH": f"{FAKES / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path / "home"),
               "AIDD_HOME": str(tmp_path / "aidd-home"), "IS_SANDBOX": "1"}
    settings = load_settings({"project-dir": project.root}, Actions(), environ, cwd=tmp_path)
    plan = prepare_run(settings, project, None, clock)
    try:
        project.iterations.mkdir()  # as the run's start makes it
        events = EventLog(project.events, "run-1", root=project.root, clock=clock)
        journal = Journal(Console(io.BytesIO()), events, clock, project.root)
        session = FakeSession(clock, [success(lambda d: (d / "made.txt").write_text("x\n"))])
        runner = IterationRunner(plan, journal, Interrupt(), clock, session, tree=tree)
        attempt = runner.run(PhaseState(Phase(PhaseKind.MAIN)), 1, False, None)
        journal.close_log()
    finally:
        plan.lock.release()
    (request,) = session.requests
    assert request.project_dir == tree.root
    assert (tree.root / "made.txt").is_file()
    assert not (project.root / "made.txt").exists()
    assert project.log(1).is_file()
    assert project.log(1, ".prompt.md").is_file()
    assert not tree.iterations.exists()
    assert "made.txt" in attempt.changed  # checkpointed in the tree the agent changed
