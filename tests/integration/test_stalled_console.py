"""A terminal that stops reading never stalls supervision (issue 13 item 3): with aidd's stdout
a pipe nobody reads, the wall-clock limit, SIGTERM and `.stop` still end the run on time, and
the iteration log still gets every byte."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.waiting import wait_for

FLOOD = 12_000_000  # far more than a pipe (64 KiB) and aidd's console buffer (4 MiB) hold


def _start(project: Path, env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "aidd", "--project-dir", str(project), "--idle-timeout", "0",
         *args], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL)  # stdout: never read


def _log_size(project: Path) -> int:
    log = project / ".automaker" / "iterations" / "001.log"
    return log.stat().st_size if log.exists() else 0


def _wait(proc: subprocess.Popen[bytes], limit_s: float) -> tuple[int, float]:
    start = time.monotonic()
    try:
        code = proc.wait(limit_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"aidd did not end within {limit_s} s with its stdout stalled")
    finally:
        assert proc.stdout is not None
        proc.stdout.close()
    return code, time.monotonic() - start


def _events(project: Path) -> list[dict[str, object]]:
    text = (project / ".automaker" / "events.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture
def flooding(fake_agent: FakeAgent) -> FakeAgent:
    fake_agent.script([{"init": True}, {"flood": FLOOD}, {"sleep": 60}])
    return fake_agent


@pytest.mark.usefixtures("flooding")
def test_the_wall_clock_limit_fires_on_time(env: dict[str, str], project: Path) -> None:
    started = time.monotonic()
    proc = _start(project, env, "--timeout", "3", "--max-iterations", "1")
    code, _ = _wait(proc, 40)
    assert code == 0
    assert time.monotonic() - started < 25
    ends = [e for e in _events(project) if e["event"] == "iteration_end"]
    assert ends[0]["result"] == 124
    assert _log_size(project) > FLOOD


@pytest.mark.usefixtures("flooding")
def test_sigterm_and_stop_are_honoured(env: dict[str, str], project: Path) -> None:
    proc = _start(project, env, "--timeout", "60", "--max-iterations", "1")
    # the flood is in the log, the pipe is full
    wait_for(lambda: _log_size(project) >= FLOOD, 30, "the flood in the log")
    proc.send_signal(signal.SIGTERM)
    code, took = _wait(proc, 30)
    assert code == 124
    assert took < 15
    assert _log_size(project) > FLOOD
    proc = _start(project, env, "--timeout", "3", "--max-iterations", "5")
    # A `.stop` from before the run started is stale and removed (SUP-90): ask once it runs.
    events = project / ".automaker" / "events.jsonl"
    wait_for(lambda: events.read_text().count('"event": "run_start"') == 2, 30,
             "the second run to start")
    (project / ".automaker" / ".stop").write_text("now\n")
    code, _ = _wait(proc, 40)
    assert code == 6
