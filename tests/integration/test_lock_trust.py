"""The project lock is project content (issue 13 items 1, 4, 15): a planted lock file is never
written through, a copied project's lock record never leads to killing the original's agent, and
a record that proves nothing is not a running aidd."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.integration.conftest import RunAidd, tree_snapshot
from tests.reliability.harness import wait_for

FAST = ("--idle-nudge-timeout", "20", "--idle-timeout", "40", "--timeout", "60")


def _outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside" / "precious.txt"
    target.parent.mkdir()
    target.write_text("the user's own file\n")
    return target


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "fifo"])
def test_a_planted_lock_file_is_refused_before_anything_is_written(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
        tmp_path: Path, kind: str) -> None:
    outside = _outside(tmp_path)
    lock = project / ".automaker" / "aidd.lock"
    lock.parent.mkdir()
    if kind == "symlink":
        lock.symlink_to(outside)
    elif kind == "hardlink":
        os.link(outside, lock)
    else:
        os.mkfifo(lock)
    before = tree_snapshot(project)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *FAST, env=env,
                   timeout=20)
    assert res.code == 3, res.err
    assert res.err.count("\n") == 1, res.err
    assert "aidd.lock" in res.err
    assert outside.read_text() == "the user's own file\n"
    assert os.path.lexists(lock)
    assert tree_snapshot(project) == before
    assert fake_agent.records() == []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_a_copy_of_a_running_project_leaves_the_originals_agent_alone(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
        tmp_path: Path) -> None:
    """`cp -a projA projB` while A runs, then aidd on B: A's lock record names a live aidd
    of another directory, so nothing is reclaimed and A's agent keeps running (item 4)."""
    fake_agent.script([{"line": "working"}, {"sleep": 30}, {"exit": 0}],
                      [{"say": "copy's run"}, {"exit": 0}])
    first = subprocess.Popen(
        [sys.executable, "-m", "aidd", "--project-dir", str(project), "--max-iterations", "1",
         *FAST], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    try:
        wait_for(fake_agent.records, 20, "the original's agent to start")
        agent = fake_agent.records()[0]["pid"]
        copy = tmp_path / "copy"
        shutil.copytree(project, copy, symlinks=True,
                        ignore=shutil.ignore_patterns("iterations"))
        assert json.loads((copy / ".automaker" / "aidd.lock").read_text())["pid"] == first.pid
        res = run_aidd("--project-dir", str(copy), "--max-iterations", "1", *FAST, env=env)
        assert res.code == 0, res.err
        assert "reclaim" not in (res.out + res.err).lower()
        assert _alive(agent), "the original run's agent was killed"
        assert first.poll() is None
    finally:
        first.terminate()
        first.wait(30)


def test_a_lock_record_without_a_start_time_is_not_a_running_aidd(
        run_aidd: RunAidd, env: dict[str, str], project: Path) -> None:
    """Item 15: a live pid alone (here pid 1) proves nothing."""
    automaker = project / ".automaker"
    (automaker / "features").mkdir(parents=True)
    (automaker / "aidd.lock").write_text(json.dumps(
        {"pid": 1, "host": os.uname().nodename, "started_at": "2026-01-01T00:00:00"}) + "\n")
    res = run_aidd("--project-dir", str(project), "--status", "--json", env=env)
    assert res.code == 0, res.err
    run = json.loads(res.out)["run"]
    assert run["running"] is False, run
