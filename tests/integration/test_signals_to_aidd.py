"""Signals to aidd during an attempt: SIGTERM, SIGINT and SIGHUP kill the whole agent tree and
end the run with 124; a second SIGINT skips the kill grace (SUP-81, AC-54)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from tests.conftest import FakeAgent
from tests.fakes.attempt import pid_alive
from tests.integration.runs import LIMITS, events, has_event, log, started
from tests.integration.scenario import GRACE_S, SLACK_S, STUBBORN, MakeScenario, alive
from tests.waiting import wait_for


def test_sigterm_and_sigint_to_aidd_kill_the_tree_and_exit_124(
        scenario: MakeScenario) -> None:
    steps = [{"init": True}, {"say": "spawning"}, *STUBBORN, {"sleep": 60}]
    args = ("--max-iterations", "3", "--idle-timeout", "0", "--timeout", "60")
    runs = {sig: scenario(cli, steps, args=args).start()
            for sig, cli in ((signal.SIGTERM, "claude-code"), (signal.SIGINT, "opencode"))}
    for s in runs.values():
        s.wait_for(s.tree_started)
    sent = {}
    for sig, s in runs.items():
        assert s.proc is not None
        s.proc.send_signal(sig)
        sent[sig] = time.monotonic()
    for sig, s in runs.items():
        s.wait()
        assert s.code == 124, s.err
        assert s.ended - sent[sig] < GRACE_S + SLACK_S
        pids = s.tree_pids()
        assert len(pids) == 3
        assert alive(pids) == []
        assert not (s.project / ".automaker" / "aidd.lock").exists()
        assert len(s.fake.records()) == 1  # no further iteration
        events = s.events()
        assert events[-1]["event"] == "run_end"
        assert events[-1]["reason"] == "signal"
        (end,) = s.named("iteration_end")
        assert (end["result"], end["reason"]) == (124, "signal")
        log = s.log().splitlines()
        assert f"interrupted by {sig.name}; killing the agent tree" in "\n".join(log)
        tail = [ln for ln in log if ln.startswith("[aidd")][-2:]
        assert tail[0] == "[aidd] --- end of iteration 1 (attempt 001) ---"
        assert tail[1].startswith("[aidd] Finished: ")
        assert log[-1] == tail[1]


def test_sighup_ends_the_run_like_sigterm(env: dict[str, str], fake_agent: FakeAgent,
                                          project: Path, tmp_path: Path) -> None:
    """AC-54: SIGHUP during an attempt: 124, tree dead, lock gone, run_end (signal) last."""
    fake_agent.script([{"say": "working"}, {"spawn": ["sleep", "1000"], "pid_file": "child"},
                       {"mark": "ready"}, {"sleep": 60}])
    with started(env, tmp_path, "--project-dir", str(project), *LIMITS) as proc:
        wait_for((fake_agent.record_dir / "ready").exists)
        sent = time.monotonic()
        proc.send_signal(signal.SIGHUP)
        assert proc.wait(timeout=30) == 124
        assert time.monotonic() - sent < 5 + 3  # the kill grace, plus slack
    child = fake_agent.pid("child")
    assert child is not None
    assert not pid_alive(child)
    assert not pid_alive(fake_agent.records()[0]["pid"])
    assert not (project / ".automaker" / "aidd.lock").exists()
    last = events(project)[-1]
    assert (last["event"], last["reason"], last["exit_code"]) == ("run_end", "signal", 124)
    assert [e["name"] for e in events(project, "signal")] == ["SIGHUP"]
    assert "interrupted by SIGHUP" in log(project)


def test_second_sigint_skips_the_grace(env: dict[str, str], fake_agent: FakeAgent,
                                       project: Path, tmp_path: Path) -> None:
    """AC-54: an agent ignoring SIGTERM dies at a second SIGINT without the 5 s grace."""
    fake_agent.script([{"say": "working"}, {"ignore": ["TERM"]}, {"mark": "ready"},
                       {"sleep": 60}])
    with started(env, tmp_path, "--project-dir", str(project), *LIMITS) as proc:
        wait_for((fake_agent.record_dir / "ready").exists)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        wait_for(has_event(project, "signal"), timeout=10)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 124
        elapsed = time.monotonic() - sent
    assert elapsed < 4.5, elapsed  # the grace alone is 5 s
    assert not pid_alive(fake_agent.records()[0]["pid"])
    assert events(project)[-1]["event"] == "run_end"
