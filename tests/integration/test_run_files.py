"""aidd's own run files under hostile or unlucky conditions (issue 13 items 9, 10, 12, 13, 16):
a `.stop` written while the run starts, `.stop` as a directory, a torn last event, the order of
the first events, and no library chatter on the console."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import FakeAgent
from tests.integration.runs import WIDE_LIMITS, RunAidd, events


def test_a_stop_written_after_the_run_started_is_honoured(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    """Item 9: a `.stop` newer than the run's start is a request, not a stale leftover; an
    old one is removed."""
    stop = project / ".automaker" / ".stop"
    stop.parent.mkdir()
    stop.write_text("old\n")
    old = time.time() - 3600
    os.utime(stop, (old, old))
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *WIDE_LIMITS, env=env)
    assert res.code == 0, res.err
    assert "removed a stale .stop" in res.out
    stop.write_text("just now\n")
    future = time.time() + 30  # as if `aidd --stop` answered while this run took its lock
    os.utime(stop, (future, future))
    res = run_aidd("--project-dir", str(project), "--max-iterations", "3", *WIDE_LIMITS, env=env)
    assert res.code == 6, res.err
    assert len(fake_agent.records()) == 1


def test_stop_as_a_directory_never_crashes(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    """Item 10: before a run, for `--stop`, and made by the agent mid-run."""
    stop = project / ".automaker" / ".stop"
    stop.mkdir(parents=True)
    res = run_aidd("--project-dir", str(project), "--stop", env=env)
    assert res.code == 0, res.err
    assert stop.is_dir()
    old = time.time() - 3600
    os.utime(stop, (old, old))
    fake_agent.script([{"spawn": ["mkdir", "-p", ".automaker/.stop"]}, {"sleep": 0.3},
                       {"say": "ok"}, {"finish": True}])
    res = run_aidd("--project-dir", str(project), "--max-iterations", "3", *WIDE_LIMITS, env=env)
    assert res.code == 6, res.err
    assert "internal error" not in res.err
    assert len(fake_agent.records()) == 1
    assert not stop.exists()


def test_a_torn_last_event_does_not_swallow_the_next_run_start(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    """Item 12 and 16: the new run starts on a line of its own, and `run_start` comes first
    even when there are start-up warnings (an untested CLI version)."""
    log = project / ".automaker" / "events.jsonl"
    log.parent.mkdir()
    log.write_bytes(b'{"v": 1, "event": "iteration_end", "numb')
    env = {**env, "FAKE_AGENT_VERSION": "0.0.1"}
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *WIDE_LIMITS, env=env)
    assert res.code == 0, res.err
    lines = log.read_bytes().split(b"\n")
    assert lines[0] == b'{"v": 1, "event": "iteration_end", "numb'
    mine = [json.loads(line) for line in lines[1:] if line]
    assert mine[0]["event"] == "run_start"
    assert any(e["event"] == "warning" for e in mine[1:3]), mine[:3]
    assert mine[-1]["event"] == "run_end"


def test_no_library_chatter_reaches_stderr(env: dict[str, str], fake_agent: FakeAgent,
                                           project: Path) -> None:
    """Item 13: watchdog's own log lines never reach the user's terminal."""
    fake_agent.script([{"say": "ok"}, {"finish": True}])
    for _ in range(3):  # the watchdog note came from a race at shutdown
        done = subprocess.run(
            [sys.executable, "-m", "aidd", "--project-dir", str(project), "--max-iterations",
             "1", *WIDE_LIMITS], env=env, capture_output=True, text=True, timeout=60,
            stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
    assert events(project, "run_end")


def test_closed_or_full_standard_streams_are_one_line_or_nothing(
        env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    """Item 13: `aidd … >&-` runs (no stale lock, nothing of the console in the lock file);
    `--status >/dev/full` is one line on stderr, no crash file."""
    fake_agent.script([{"say": "ok"}, {"finish": True}])
    done = subprocess.run(
        [sys.executable, "-m", "aidd", "--project-dir", str(project), "--max-iterations", "1",
         *WIDE_LIMITS], env=env, stderr=subprocess.PIPE, text=True, timeout=60,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        preexec_fn=lambda: os.close(1))
    assert done.returncode == 0, done.stderr
    assert not (project / ".automaker" / "aidd.lock").exists()
    assert events(project, "run_end")
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "aidd", "--project-dir", str(project),
                               "--status"], env=env, stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 1
    assert done.stderr == "aidd: error: cannot write to standard output (No space left on device)\n"
    assert not list((project / ".automaker").glob("aidd-crash-*"))
