"""The real `aidd` loop against the fake agent CLIs: setup, counting, stop, completion, events."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.integration.conftest import RunAidd, complete_project, events, tree_snapshot

FAST = ("--idle-nudge-timeout", "5", "--idle-timeout", "10", "--timeout", "30")
OK = [{"say": "done"}, {"finish": "stop"}, {"exit": 0}]


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "spec.md"
    path.write_bytes(b"# Shop\nSell things.\n\xe2\x82\xac\n")
    return path


def test_new_project_gets_initializer_and_artifacts(run_aidd: RunAidd, env: dict[str, str],
                                                   fake_agent: FakeAgent, tmp_path: Path,
                                                   spec: Path) -> None:
    """AC-14, AC-15, AC-16, AC-23, AC-84."""
    fake_agent.script(OK)
    project = tmp_path / "proj"
    res = run_aidd("--project-dir", str(project), "--spec", str(spec), "--max-iterations", "2",
                   *FAST, env=env)
    assert res.code == 0, res.err
    auto = project / ".automaker"
    assert (auto / "app_spec.txt").read_bytes() == spec.read_bytes()
    for name in ("CHANGELOG.md", "project_structure.md", "todo.md", "features"):
        assert (auto / name).exists(), name
    assert (project / ".gitignore").is_file()
    assert not (auto / "aidd.lock").exists()
    records = fake_agent.records()
    assert len(records) == 2
    prompts = sorted((auto / "iterations").glob("*.prompt.md"))
    assert [p.name for p in prompts] == ["001.prompt.md", "002.prompt.md"]
    for prompt in prompts:
        assert "Prompt: initializer" in prompt.with_suffix("").with_suffix(".log").read_text()
    names = [e["event"] for e in events(project)]
    assert names[0] == "run_start"
    assert names[-1] == "run_end"
    assert names.index("phase_start") < names.index("iteration_start") < names.index(
        "iteration_end") < names.index("phase_end")
    assert not (auto / "_common").exists()


def test_failing_agent_counts_every_attempt(run_aidd: RunAidd, env: dict[str, str],
                                            fake_agent: FakeAgent, tmp_path: Path) -> None:
    """AC-49: --max-iterations 5 and an agent that always fails: exactly 5 attempts, exit 0."""
    fake_agent.script([{"say": "x"}, {"exit": 3}])
    project = tmp_path / "proj"
    project.mkdir()
    (project / "README.md").write_text("existing code\n")
    res = run_aidd("--project-dir", str(project), "--max-iterations", "5", *FAST, env=env)
    assert res.code == 0, res.err
    assert len(fake_agent.records()) == 5


def test_quit_on_abort_exits_with_the_last_result(run_aidd: RunAidd, env: dict[str, str],
                                                  fake_agent: FakeAgent, tmp_path: Path) -> None:
    """AC-48."""
    fake_agent.script([{"say": "x"}, {"exit": 3}])
    project = tmp_path / "proj"
    project.mkdir()
    (project / "README.md").write_text("existing code\n")
    res = run_aidd("--project-dir", str(project), "--quit-on-abort", "2", *FAST, env=env)
    assert res.code == 3, res.err
    assert len(fake_agent.records()) == 2
    assert events(project)[-1]["reason"] == "quit_on_abort"


def test_stale_stop_is_removed_and_stop_during_run_exits_6(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path
) -> None:
    """AC-51, AC-52: a stale .stop is deleted; one written by the agent's attempt ends the run."""
    project = tmp_path / "proj"
    (project / ".automaker").mkdir(parents=True)
    (project / "README.md").write_text("existing code\n")
    (project / ".automaker" / ".stop").write_text("old\n")
    an_hour_ago = time.time() - 3600  # stale: older than the run (one newer is a request)
    os.utime(project / ".automaker" / ".stop", (an_hour_ago, an_hour_ago))
    fake_agent.script([{"say": "x"}, {"write_file": ".automaker/.stop", "text": "now"},
                       {"sleep": 1.5}, {"exit": 0}])
    res = run_aidd("--project-dir", str(project), *FAST, env=env)
    assert res.code == 6, res.err
    assert len(fake_agent.records()) == 1
    assert not (project / ".automaker" / ".stop").exists()
    names = [e["event"] for e in events(project)]
    assert "stop_requested" in names
    assert names[-2:] == ["stop", "run_end"]


def test_missing_agent_binary_exits_8_and_writes_nothing(run_aidd: RunAidd,
                                                         aidd_env: dict[str, str],
                                                         tmp_path: Path) -> None:
    """AC-8."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "README.md").write_text("x")
    before = tree_snapshot(project)
    res = run_aidd("--project-dir", str(project), env={**aidd_env, "PATH": str(tmp_path)})
    assert res.code == 8
    assert "opencode" in res.err
    assert tree_snapshot(project) == before


@pytest.mark.parametrize("layout", ["missing", "only-ignored"])
def test_new_project_without_spec_exits_2_and_creates_nothing(
    run_aidd: RunAidd, env: dict[str, str], tmp_path: Path, layout: str
) -> None:
    """AC-9."""
    project = tmp_path / "proj"
    if layout == "only-ignored":
        for name in (".git", "node_modules", ".vscode", ".idea"):
            (project / name).mkdir(parents=True)
    before = tree_snapshot(project)
    res = run_aidd("--project-dir", str(project), env=env)
    assert res.code == 2
    assert "--spec" in res.err
    assert tree_snapshot(project) == before
    assert project.exists() == (layout != "missing")


def test_spec_that_is_missing_or_a_directory_exits_3(run_aidd: RunAidd, env: dict[str, str],
                                                     tmp_path: Path) -> None:
    """AC-10."""
    project = tmp_path / "proj"
    for spec in (tmp_path / "nope.md", tmp_path):
        res = run_aidd("--project-dir", str(project), "--spec", str(spec), env=env)
        assert res.code == 3, res.err
        assert not project.exists()


def test_two_phase_completion_then_restart_exits_73(run_aidd: RunAidd, env: dict[str, str],
                                                    fake_agent: FakeAgent,
                                                    tmp_path: Path) -> None:
    """AC-59, AC-60: pending + review, then confirmed (73); a restart exits 73 at once."""
    fake_agent.script(OK)
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    complete_project(project)
    res = run_aidd("--project-dir", str(project), *FAST, env=env)
    assert res.code == 73, res.err
    assert len(fake_agent.records()) == 1
    assert (project / ".automaker" / ".project_completed").is_file()
    assert not (project / ".automaker" / ".project_completion_pending").exists()
    log = (project / ".automaker" / "iterations" / "001.log").read_text()
    assert "completion review" in log
    res = run_aidd("--project-dir", str(project), *FAST, env=env)
    assert res.code == 73
    assert len(fake_agent.records()) == 1
    res = run_aidd("--project-dir", str(project), "--prompt", "add {{ x }} $HOME `id`",
                   "--max-iterations", "1", *FAST, env=env)
    assert res.code == 0, res.err
    assert len(fake_agent.records()) == 2
    prompt = (project / ".automaker" / "iterations" / "002.prompt.md").read_text()
    assert "add {{ x }} $HOME `id`" in prompt


def test_max_iterations_zero_runs_nothing(run_aidd: RunAidd, env: dict[str, str],
                                          fake_agent: FakeAgent, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "README.md").write_text("x")
    res = run_aidd("--project-dir", str(project), "--max-iterations", "0", env=env)
    assert res.code == 0, res.err
    assert fake_agent.records() == []
