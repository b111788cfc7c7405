"""The real `aidd` process: four-layer configuration precedence (AC-12) and the single-instance
lock while a run is live (AC-53)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.integration.conftest import RunAidd, tree_snapshot

FAST = ("--idle-nudge-timeout", "20", "--idle-timeout", "40", "--timeout", "60")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An existing codebase with one failing feature, so no run ends by completion."""
    root = tmp_path / "proj"
    feature = root / ".automaker" / "features" / "feature-1-a"
    feature.mkdir(parents=True)
    (root / "README.md").write_text("existing code\n")
    (feature / "feature.json").write_text(
        '{"id": "feature-1-a", "category": "Core", "description": "d", "status": "backlog",'
        ' "passes": false}'
    )
    return root


def test_four_layers_of_max_iterations(run_aidd: RunAidd, env: dict[str, str],
                                       fake_agent: FakeAgent, project: Path) -> None:
    """AC-12: user file 5 < project file 4 < AIDD_MAX_ITERATIONS 3 < flag 2, peeled one by one."""
    fake_agent.script([{"say": "did a thing"}, {"exit": 0}])
    user_file = Path(env["XDG_CONFIG_HOME"]) / "aidd" / "config.yaml"
    user_file.parent.mkdir(parents=True)
    user_file.write_text("max-iterations: 5\n")
    project_file = project / ".automaker" / "aidd.yaml"
    project_file.write_text("max-iterations: 4\n")
    layered = {**env, "AIDD_MAX_ITERATIONS": "3"}
    runs = [
        (("--max-iterations", "2"), layered, 2),
        ((), layered, 3),
        ((), env, 4),
        ((), env, 5),
    ]
    seen = 0
    for flags, run_env, expected in runs:
        if expected == 5:
            project_file.unlink()
        res = run_aidd("--project-dir", str(project), *flags, *FAST, env=run_env)
        assert res.code == 0, res.err
        attempts = len(fake_agent.records()) - seen
        seen += attempts
        assert attempts == expected, (flags, expected, res.out[-2000:])


def _wait_for(predicate: object, what: str, limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def _start(project: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "aidd", "--project-dir", str(project), *args, *FAST],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )


def test_second_instance_is_refused_while_status_and_stop_work(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    """AC-53: a second aidd exits 1 naming the first's pid and touches nothing; --status and
    --stop work meanwhile, and the stop ends the first run with 6 after its agent run."""
    fake_agent.script([{"line": "working"}, {"sleep": 3}, {"exit": 0}])
    first = _start(project, env, "--max-iterations", "5")
    try:
        _wait_for(lambda: fake_agent.records(), "the first run's agent to start")
        before = tree_snapshot(project)
        second = run_aidd("--project-dir", str(project), "--max-iterations", "1", *FAST, env=env)
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
        _out, err = first.communicate(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode == 6, err
    assert len(fake_agent.records()) == 1
    assert not (project / ".automaker" / ".stop").exists()
    assert not (project / ".automaker" / "aidd.lock").exists()


def test_lock_of_a_killed_aidd_is_reclaimed_with_a_warning(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    """AC-53: SIGKILL leaves the lock file behind; the next run reclaims it and says so."""
    fake_agent.script([{"line": "working"}, {"sleep": 30}, {"exit": 0}],
                      [{"say": "second run"}, {"exit": 0}])
    first = _start(project, env, "--max-iterations", "1")
    lock = project / ".automaker" / "aidd.lock"
    try:
        _wait_for(lambda: fake_agent.records(), "the first run's agent to start")
        assert lock.exists()
        first.kill()
        first.communicate(timeout=10)
    finally:
        if first.poll() is None:
            first.kill()
    agent_pid = fake_agent.records()[0].get("pid")
    if isinstance(agent_pid, int):  # the orphaned agent may outlive aidd; end it here
        with contextlib.suppress(ProcessLookupError):
            os.kill(agent_pid, signal.SIGKILL)
    assert lock.exists()
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *FAST, env=env)
    assert res.code == 0, res.err
    assert f"pid {first.pid}" in res.err + res.out
    assert "reclaim" in (res.err + res.out).lower()
    assert len(fake_agent.records()) == 2
    assert not lock.exists()
