"""The project lock: one aidd per project, a second refused while `--status` and `--stop` work,
the lock of a killed aidd reclaimed (AC-53); and the lock is project content (issue 13 items 1,
4, 15): a planted lock file is never written through, a copied project's lock record never
leads to killing the original's agent, and a record that proves nothing is not a running aidd."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.integration.runs import WIDE_LIMITS, RunAidd, console, started, tree_snapshot
from tests.planted import plant
from tests.reliability.harness import running
from tests.waiting import wait_for


def _outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside" / "precious.txt"
    target.parent.mkdir()
    target.write_text("the user's own file\n")
    return target


def test_second_instance_is_refused_while_status_and_stop_work(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
        tmp_path: Path) -> None:
    """AC-53: a second aidd exits 1 naming the first's pid and touches nothing; --status and
    --stop work meanwhile, and the stop ends the first run with 6 after its agent run."""
    feature(project, description="d")  # no run ends by completion; --status has one to count
    # The agent works until the stop request is there: status, stop and the second run come
    # while it runs however loaded the machine (a 3 s sleep was outrun: flaky under load).
    fake_agent.script([{"line": "working"}, {"wait_file": ".automaker/.stop", "timeout": 60},
                       {"exit": 0}])
    with started(env, tmp_path, "--project-dir", str(project), "--max-iterations", "5",
                 *WIDE_LIMITS) as first:
        wait_for(fake_agent.records, 20, "the first run's agent to start")
        before = tree_snapshot(project)
        second = run_aidd("--project-dir", str(project), "--max-iterations", "1", *WIDE_LIMITS,
                          env=env)
        assert second.code == 1
        assert f"pid {first.pid}" in second.err
        assert len(second.err.strip().splitlines()) == 1, second.err
        assert tree_snapshot(project) == before
        assert len(fake_agent.records()) == 1

        status = run_aidd("--project-dir", str(project), "--status", env=env)
        assert status.code == 0, status.err
        assert "Total" in status.out or "total" in status.out.lower()

        stop = run_aidd("--project-dir", str(project), "--stop", env=env)
        assert stop.code == 0, stop.err
        assert f"pid {first.pid}" in stop.out
        first.wait(timeout=30)
    assert first.returncode == 6, console(tmp_path)
    assert len(fake_agent.records()) == 1
    assert not (project / ".automaker" / ".stop").exists()
    assert not (project / ".automaker" / "aidd.lock").exists()


def test_lock_of_a_killed_aidd_is_reclaimed_with_a_warning(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
        tmp_path: Path) -> None:
    """AC-53: SIGKILL leaves the lock file behind; the next run reclaims it and says so."""
    feature(project, description="d")  # no run ends by completion
    fake_agent.script([{"line": "working"}, {"sleep": 30}, {"exit": 0}],
                      [{"say": "second run"}, {"exit": 0}])
    lock = project / ".automaker" / "aidd.lock"
    with started(env, tmp_path, "--project-dir", str(project), "--max-iterations", "1",
                 *WIDE_LIMITS) as first:
        wait_for(fake_agent.records, 20, "the first run's agent to start")
        assert lock.exists()
        first.kill()
        first.wait(timeout=10)
    agent_pid = fake_agent.records()[0]["pid"]
    wait_for(lambda: not running(agent_pid), 10, "the agent's end with aidd")
    assert lock.exists()
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *WIDE_LIMITS, env=env)
    assert res.code == 0, res.err
    assert f"pid {first.pid}" in res.err + res.out
    assert "reclaim" in (res.err + res.out).lower()
    assert len(fake_agent.records()) == 2
    assert not lock.exists()


def test_an_agent_ignoring_sigterm_dies_with_a_killed_aidd(
        env: dict[str, str], fake_agent: FakeAgent, project: Path, tmp_path: Path) -> None:
    """aidd killed with SIGKILL cannot end its agent: the kernel does (PR_SET_PDEATHSIG), so
    no agent runs on unsupervised, and paid for, until the next run's sweep."""
    feature(project, description="d")
    fake_agent.script([{"ignore": ["TERM", "HUP", "INT"]}, {"line": "working"}, {"sleep": 60},
                       {"exit": 0}])
    with started(env, tmp_path, "--project-dir", str(project), "--max-iterations", "1",
                 *WIDE_LIMITS) as first:
        wait_for(lambda: "working" in console(tmp_path), 20, "the agent at work")
        agent_pid = fake_agent.records()[0]["pid"]
        assert running(agent_pid)
        first.kill()
        first.wait(timeout=10)
        killed = time.monotonic()
        wait_for(lambda: not running(agent_pid), 10, "the agent's end with aidd")
    assert time.monotonic() - killed < 10


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "fifo"])
def test_a_planted_lock_file_is_refused_before_anything_is_written(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
        tmp_path: Path, kind: str) -> None:
    outside = _outside(tmp_path)
    lock = plant(project / ".automaker" / "aidd.lock", kind, outside)
    before = tree_snapshot(project)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *WIDE_LIMITS, env=env,
                   timeout=20)
    assert res.code == 3, res.err
    assert res.err.count("\n") == 1, res.err
    assert "aidd.lock" in res.err
    assert outside.read_text() == "the user's own file\n"
    assert os.path.lexists(lock)
    assert tree_snapshot(project) == before
    assert fake_agent.records() == []


def test_a_copy_of_a_running_project_leaves_the_originals_agent_alone(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
        tmp_path: Path) -> None:
    """`cp -a projA projB` while A runs, then aidd on B: A's lock record names a live aidd
    of another directory, so nothing is reclaimed and A's agent keeps running (item 4)."""
    fake_agent.script([{"line": "working"}, {"sleep": 30}, {"exit": 0}],
                      [{"say": "copy's run"}, {"exit": 0}])
    first = subprocess.Popen(
        [sys.executable, "-m", "aidd", "--project-dir", str(project), "--max-iterations", "1",
         *WIDE_LIMITS], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    try:
        wait_for(fake_agent.records, 20, "the original's agent to start")
        agent = fake_agent.records()[0]["pid"]
        copy = tmp_path / "copy"
        shutil.copytree(project, copy, symlinks=True,
                        ignore=shutil.ignore_patterns("iterations"))
        assert json.loads((copy / ".automaker" / "aidd.lock").read_text())["pid"] == first.pid
        res = run_aidd("--project-dir", str(copy), "--max-iterations", "1", *WIDE_LIMITS, env=env)
        assert res.code == 0, res.err
        assert "reclaim" not in (res.out + res.err).lower()
        assert running(agent), "the original run's agent was killed"
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
