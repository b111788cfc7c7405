"""Whole-tree kills, leftovers, lingering, wall clock and interrupts (SUP-30..43;
AC-40, AC-42, AC-43, AC-44): one attempt in-process, then through the real aidd, whose kill
grace is the fixed 5 s."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from aidd.run.signals import Interrupt
from aidd.session import procfs
from tests.conftest import FakeAgent
from tests.fakes.attempt import STUBBORN_TREE, Trigger, pid_alive, run_fake_attempt
from tests.integration.scenario import (
    CLIS,
    GRACE_S,
    SLACK_S,
    STUBBORN,
    MakeScenario,
    alive,
    run_together,
)


def tree_pids(fake_agent: FakeAgent) -> list[int]:
    pids = [r["pid"] for r in fake_agent.records()]
    pids += [p for p in (fake_agent.pid("grandchild"), fake_agent.pid("child")) if p]
    return pids


def interrupt_when_started(fake_agent: FakeAgent, interrupt: Interrupt, times: int,
                           delay_s: float = 0.3) -> Trigger:
    def fire() -> None:
        for _ in range(times):
            interrupt.trigger("SIGTERM")

    trigger = Trigger(lambda: fake_agent.pid("child") is not None, fire, delay_s)
    trigger.start()
    return trigger


@pytest.mark.parametrize(
    ("ending", "settings", "result", "reason", "kill_reason"),
    [
        ("idle", {"idle_timeout_s": 1.0}, 71, "idle_timeout", "idle"),
        ("timeout", {"timeout_s": 1.0, "idle_timeout_s": 0}, 124, "wall_timeout", "timeout"),
        ("interrupt", {}, 124, "signal", "signal"),
    ],
)
def test_no_process_of_the_tree_survives(fake_agent: FakeAgent, tmp_path: Path, ending: str,
                                         settings: dict[str, Any], result: int, reason: str,
                                         kill_reason: str) -> None:
    """AC-40: a setsid'd double-forked grandchild ignoring SIGTERM dies too."""
    fake_agent.script(STUBBORN_TREE)
    interrupt = Interrupt()
    trigger = interrupt_when_started(fake_agent, interrupt, 1) if ending == "interrupt" else None
    grace = 0.5
    run = run_fake_attempt(tmp_path, "claude-code", interrupt=interrupt, kill_grace_s=grace,
                           **settings)
    if trigger:
        trigger.join()
    assert (run.outcome.result, run.outcome.reason.value) == (result, reason)
    pids = tree_pids(fake_agent)
    assert len(pids) == 3
    assert [p for p in pids if pid_alive(p)] == []
    (kill,) = run.named("kill")
    assert kill["reason"] == kill_reason
    assert kill["escalated"] is True
    assert set(pids) <= {p["pid"] for p in kill["pids"]}
    assert run.elapsed_s < 1.0 + grace + 1.5
    assert f"killed the agent tree ({kill_reason})".encode() in run.log
    if ending == "interrupt":
        assert run.outcome.interrupted_by == "SIGTERM"
        assert b"interrupted by SIGTERM" in run.log


def test_a_second_signal_skips_the_grace(fake_agent: FakeAgent, tmp_path: Path) -> None:
    fake_agent.script(STUBBORN_TREE)
    interrupt = Interrupt()
    trigger = interrupt_when_started(fake_agent, interrupt, 2, delay_s=0.1)
    run = run_fake_attempt(tmp_path, "opencode", interrupt=interrupt, kill_grace_s=10)
    trigger.join()
    assert run.outcome.result == 124
    assert run.elapsed_s < 3
    assert [p for p in tree_pids(fake_agent) if pid_alive(p)] == []


def test_leftovers_of_a_normal_exit_are_killed_and_named(fake_agent: FakeAgent,
                                                         tmp_path: Path) -> None:
    """AC-42: the attempt ends about 1 s after the exit; the sleeper is killed and named."""
    fake_agent.script([{"init": True}, {"say": "done"}, {"finish": True},
                       {"spawn": ["sleep", "1000"], "pid_file": "sleeper"}, {"exit": 0}])
    run = run_fake_attempt(tmp_path, "opencode")
    sleeper = fake_agent.pid("sleeper")
    assert sleeper is not None
    assert not pid_alive(sleeper)
    assert run.outcome.result == 0
    assert run.elapsed_s < 2.5
    (reaped,) = run.named("children_reaped")
    assert reaped["kept"] is False
    assert reaped["pids"] == [{"pid": sleeper, "name": "sleep", "cmd": "sleep 1000"}]
    assert f"{sleeper} sleep (sleep 1000)".encode() in run.log
    assert run.named("kill") == []


def test_keep_children_leaves_them_running(fake_agent: FakeAgent, tmp_path: Path) -> None:
    fake_agent.script([{"init": True}, {"say": "done"}, {"finish": True},
                       {"spawn": ["sleep", "1000"], "ignore": ["HUP"], "pid_file": "sleeper"},
                       {"exit": 0}])
    run = run_fake_attempt(tmp_path, "kilocode", keep_children=True)
    sleeper = fake_agent.pid("sleeper")
    assert sleeper is not None
    try:
        assert pid_alive(sleeper)
        (reaped,) = run.named("children_reaped")
        assert reaped["kept"] is True
        assert b"--keep-children" in run.log
    finally:
        os.kill(sleeper, signal.SIGKILL)
        os.waitpid(sleeper, 0)  # adopted by the subreaper: ours to reap


@pytest.mark.parametrize(
    ("cli", "steps"),
    [
        ("claude-code", [{"init": True}, {"say": "hi"}, {"result": {}}, {"sleep": 60}]),
        ("opencode", [{"init": True}, {"say": "hi"}, {"finish": True}, {"sleep": 60}]),
    ],
)
def test_an_agent_lingering_after_its_final_event_is_killed(
        fake_agent: FakeAgent, tmp_path: Path, cli: str, steps: list[dict[str, Any]]) -> None:
    """AC-43: killed after the linger grace (the nudge timeout here), result 0."""
    fake_agent.script(steps)
    run = run_fake_attempt(tmp_path, cli, idle_nudge_s=0.8, idle_timeout_s=5,
                           kill_grace_s=0.3)
    assert (run.outcome.result, run.outcome.reason.value) == (0, "linger")
    assert run.named("kill")[0]["reason"] == "linger"
    assert run.outcome.nudges == 0
    assert b"agent lingered after its final event" in run.log
    assert 0.8 < run.elapsed_s < 3


@pytest.mark.parametrize("cli", ["opencode", "kilocode"])
def test_work_after_a_context_overflow_cancels_the_linger(
        fake_agent: FakeAgent, tmp_path: Path, cli: str) -> None:
    """Issue 32: opencode and kilo compact an overflowing conversation and go on; a tool call
    after the error event is work, so the attempt is not killed as lingering (nor 76)."""
    fake_agent.script([
        {"init": True}, {"error": {"name": "ContextOverflowError",
                                   "message": "maximum context length is 128000 tokens"}},
        {"say": "compacted"}, {"sleep": 0.5}, {"tool": {"name": "write", "input": {
            "filePath": "a.py"}}}, {"sleep": 2}, {"say": "still working"}, {"sleep": 2},
        {"say": "done"}, {"finish": True}])
    # the linger grace is the nudge timeout: 3 s after the error event, before the finish
    run = run_fake_attempt(tmp_path, cli, idle_nudge_s=3, idle_timeout_s=10,
                           kill_grace_s=0.3)
    assert (run.outcome.result, run.outcome.reason.value) == (0, "exit_status")
    assert run.named("kill") == []
    assert b"agent lingered" not in run.log


@pytest.mark.parametrize("cli", ["opencode", "kilocode", "claude-code"])
def test_wall_clock_limit(fake_agent: FakeAgent, tmp_path: Path, cli: str) -> None:
    """AC-44: an agent printing forever is stopped at --timeout with 124."""
    fake_agent.script([{"init": True}, {"say": "looping"},
                       {"drip": "tick\n", "every": 0.05, "count": 10_000}])
    run = run_fake_attempt(tmp_path, cli, timeout_s=1.0, kill_grace_s=0.3)
    assert (run.outcome.result, run.outcome.reason.value) == (124, "wall_timeout")
    assert b"wall-clock limit 1s reached" in run.log
    assert 0.9 < run.elapsed_s < 3
    assert not pid_alive(fake_agent.records()[0]["pid"])


# -- through the real aidd: idle and wall clock, every CLI at once -------------------------------
@pytest.mark.parametrize("ending", ["idle", "timeout"])
def test_kills_leave_no_process_of_the_tree(scenario: MakeScenario,
                                            ending: str) -> None:
    if ending == "idle":
        steps = [{"init": True}, {"say": "spawning"}, *STUBBORN, {"sleep": 60}]
        args = ("--idle-nudge-timeout", "0", "--idle-timeout", "1", "--timeout", "60")
        result, reason, kill_reason, due = 71, "idle_timeout", "idle", 1.0
    else:
        steps = [{"init": True}, {"say": "spawning"}, *STUBBORN,
                 {"drip": "tick\n", "every": 0.1, "count": 10_000}]
        args = ("--idle-nudge-timeout", "0", "--idle-timeout", "0", "--timeout", "2")
        result, reason, kill_reason, due = 124, "wall_timeout", "timeout", 2.0
    runs = [scenario(cli, steps, args=("--max-iterations", "1", *args)) for cli in CLIS]
    run_together(runs)
    for s in runs:
        assert s.code == 0, s.err  # a failed attempt under --max-iterations is a normal end
        (end,) = s.named("iteration_end")
        assert (end["result"], end["reason"]) == (result, reason)
        pids = s.tree_pids()
        assert len(pids) == 3
        assert alive(pids) == []
        (kill,) = s.named("kill")
        assert kill["reason"] == kill_reason
        assert kill["escalated"] is True  # the grandchild needed SIGKILL
        assert set(pids) <= {p["pid"] for p in kill["pids"]}
        log = s.log()
        assert f"killed the agent tree ({kill_reason})" in log
        assert f"result {result}" in log
        assert s.since("stubborn") < due + GRACE_S + SLACK_S


@pytest.mark.parametrize("keep", [False, True])
def test_leftovers_after_a_normal_exit(scenario: MakeScenario, keep: bool) -> None:
    steps = [{"init": True}, {"tool": {"name": "bash", "input": {"command": "npm run dev &"}}},
             {"say": "started a dev server"}, {"spawn": ["sleep", "1000"], "pid_file": "child"},
             {"spawn": ["sleep", "1002"], "detach": True, "pid_file": "grandchild"},
             {"mark": "leaving"}, {"finish": True}, {"exit": 0}]
    extra = ("--keep-children",) if keep else ()
    s = scenario("opencode", steps, args=("--max-iterations", "1", *extra)).start().wait()
    child, grandchild = s.fake.pid("child"), s.fake.pid("grandchild")
    assert child is not None
    assert grandchild is not None
    s.extra_pids += [child, grandchild]
    assert s.code == 0, s.err
    (end,) = s.named("iteration_end")
    assert end["result"] == 0
    (reaped,) = s.named("children_reaped")
    assert reaped["kept"] is keep
    assert {p["pid"] for p in reaped["pids"]} == {child, grandchild}
    log = s.log()
    for pid, cmd in ((child, "sleep 1000"), (grandchild, "sleep 1002")):
        assert f"{pid} sleep ({cmd})" in log
    if keep:
        assert "left running by the agent (--keep-children)" in log
        assert alive([child, grandchild]) == [child, grandchild]
    else:
        assert "killed what the agent left running" in log
        assert alive([child, grandchild]) == []
    assert s.since("leaving") < 1 + SLACK_S  # no kill grace: both went at SIGTERM


@pytest.fixture
def looks(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[object]]:
    """What an attempt read of /proc: each pass over the table, each scan of environments
    (by the processes it was limited to; None: every process)."""
    seen: dict[str, list[object]] = {"table": [], "environs": []}
    table, carrying = procfs.table, procfs.find_carrying

    def spy_table() -> dict[int, procfs.Row]:
        seen["table"].append(1)
        return table()

    def spy_carrying(name: str, value: str, among: Any = None) -> list[procfs.Carrier]:
        seen["environs"].append(None if among is None else set(among))
        return carrying(name, value) if among is None else carrying(name, value, among)

    monkeypatch.setattr(procfs, "table", spy_table)
    monkeypatch.setattr(procfs, "find_carrying", spy_carrying)
    return seen


def test_an_agent_that_left_nothing_costs_no_look_at_every_process(
        fake_agent: FakeAgent, tmp_path: Path, looks: dict[str, list[object]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: aidd is the subreaper, so with no new child of aidd and no newborn carrying
    the mark, nothing of the tree is left: no pass over the process table, no read of every
    process's environment (2.75 ms an attempt before)."""
    if not procfs.children_known():
        pytest.skip("this kernel lists no task's children")
    fake_agent.script([{"init": True}, {"spawn": ["true"], "wait": True}, {"say": "done"},
                       {"finish": True}])
    monkeypatch.setenv("AIDD_SUPERVISOR_ID", "run-mark")
    run = run_fake_attempt(tmp_path, "opencode")
    assert run.outcome.result == 0
    assert not [e for e in run.events if e["event"] == "children_reaped"]
    assert looks["table"] == []
    assert None not in looks["environs"]


def test_a_double_forked_setsid_leftover_is_still_found_and_killed(
        fake_agent: FakeAgent, tmp_path: Path, looks: dict[str, list[object]]) -> None:
    fake_agent.script([{"init": True}, {"spawn": ["sleep", "111"], "detach": True,
                                        "pid_file": "left"}, {"finish": True}])
    run = run_fake_attempt(tmp_path, "opencode")
    left = fake_agent.pid("left")
    assert left is not None
    (reaped,) = [e for e in run.events if e["event"] == "children_reaped"]
    assert [p["pid"] for p in reaped["pids"]] == [left]
    assert not pid_alive(left)
    assert looks["table"]  # the full look
