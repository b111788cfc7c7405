"""Liveness from several signals (issue 17 part 1): a silent agent whose processes work is not
nudged or killed; one with a tool call open and nothing running, or deadlocked, is; a lingering
one ends as a success; `--liveness output` is the old output-only rule. Real processes: the
attempt in-process with the fake CLIs, then the real aidd for the flags and the file watcher."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from aidd.project.activity import FileActivity
from tests.conftest import FakeAgent
from tests.fakes.attempt import run_fake_attempt
from tests.integration.runs import RunAidd, events
from tests.integration.test_events_schema import check, schema

BURN = [sys.executable, "-c",
        "import time\nend = time.monotonic() + 20\nwhile time.monotonic() < end: sum(range(999))"]


@pytest.mark.slow
def test_a_silent_agent_whose_child_burns_cpu_is_neither_nudged_nor_killed(
        fake_agent: FakeAgent, tmp_path: Path) -> None:
    fake_agent.script([{"init": True}, {"spawn": BURN, "wait": True}, {"say": "tests ran"},
                       {"finish": True}])
    run = run_fake_attempt(tmp_path, "opencode", idle_nudge_s=2, idle_timeout_s=5,
                           timeout_s=60)
    assert run.outcome.result == 0, run.text[-2000:]
    assert run.named("nudge") == [], run.text[-3000:] + str(run.named("liveness"))
    assert run.named("kill") == []
    assert 19 < run.elapsed_s < 30
    busy = [e for e in run.named("liveness") if e["state"] == "busy"]
    assert busy, run.named("liveness")
    assert busy[0]["since_s"] < 3
    spec = schema()["events"]["liveness"]  # the in-process run's id is not a real one
    for event in run.named("liveness"):
        assert check({key: event[key] for key in spec}, spec, "liveness") == []
        assert set(event) == {*spec, *schema()["common"]}


def test_an_open_tool_call_with_nothing_running_is_nudged(fake_agent: FakeAgent,
                                                          tmp_path: Path) -> None:
    """A tool waiting on nothing (a permission prompt, a dead socket) is the hang a nudge is
    for; the nudge names the state."""
    fake_agent.script([{"init": True}, {"tool": {"name": "Bash", "input": {"command": "ask"},
                                                 "pending": True}}, {"sleep": 30}])
    run = run_fake_attempt(tmp_path, "claude-code", idle_nudge_s=1.5, idle_timeout_s=4,
                           kill_grace_s=0.5)
    assert (run.outcome.result, run.outcome.reason.value) == (71, "idle_timeout")
    (nudge,) = run.named("nudge")
    assert nudge["state"] == "hung"
    assert "nudge sent (stdin) [hung: a tool call in flight, but nothing runs]" in run.text


def test_a_deadlocked_silent_agent_is_nudged_then_killed(fake_agent: FakeAgent,
                                                         tmp_path: Path) -> None:
    fake_agent.script([{"init": True}, {"sleep": 30}], [{"sleep": 30}])
    run = run_fake_attempt(tmp_path, "claude-code", idle_nudge_s=1, idle_timeout_s=3,
                           kill_grace_s=0.5)
    assert (run.outcome.result, run.outcome.reason.value) == (71, "idle_timeout")
    (nudge,) = run.named("nudge")
    assert nudge["state"] == "waiting"  # in a conversation: a model request in flight
    assert "no output for 1s; nudge sent (stdin) [waiting: waiting for the model]" in run.text
    assert "killing the agent tree [waiting: waiting for the model]" in run.text
    assert 2.9 < run.elapsed_s < 3 + 0.5 + 1.5


def test_files_changing_count_as_work_but_not_past_the_busy_timeout(
        fake_agent: FakeAgent, tmp_path: Path) -> None:
    """An agent writing a file every 0.5 s prints nothing: busy, until --busy-timeout (3 s)
    makes it hung; then nudged and killed as any silent agent."""
    writes = [{"write_file": f"out{i}.txt", "text": "x"} for i in range(40)]
    steps: list[dict[str, object]] = [{"init": True}]
    for write in writes:
        steps += [write, {"sleep": 0.5}]
    fake_agent.script(steps)
    project = tmp_path / "project"
    project.mkdir()
    files = FileActivity(project, time.monotonic)
    files.start()
    try:
        run = run_fake_attempt(tmp_path, "opencode", idle_nudge_s=0,
                               idle_timeout_s=2, busy_timeout_s=3, kill_grace_s=0.5,
                               file_activity=files.last_change)
    finally:
        files.close()
    assert (run.outcome.result, run.outcome.reason.value) == (71, "idle_timeout")
    assert "past --busy-timeout" in run.text
    assert 3 + 2 - 0.5 < run.elapsed_s < 3 + 2 + 3  # busy 3 s, then 2 s of "silence"


@pytest.mark.slow
def test_a_lingering_agent_ends_as_a_success_within_31_s(fake_agent: FakeAgent,
                                                        tmp_path: Path) -> None:
    fake_agent.script([{"init": True}, {"say": "done"}, {"result": {}}, {"sleep": 120}])
    run = run_fake_attempt(tmp_path, "claude-code", idle_nudge_s=300, idle_timeout_s=900,
                           kill_grace_s=0.5, timeout_s=60)
    assert (run.outcome.result, run.outcome.reason.value) == (0, "linger")
    assert run.elapsed_s < 31 + 1.5
    assert "agent lingered after its final event" in run.text
    assert any(e["state"] == "lingering" for e in run.named("liveness"))


def test_output_liveness_is_the_old_rule(fake_agent: FakeAgent, tmp_path: Path) -> None:
    """With --liveness output a child burning CPU does not keep its silent agent alive."""
    fake_agent.script([{"init": True}, {"spawn": BURN, "wait": True}, {"finish": True}])
    run = run_fake_attempt(tmp_path, "claude-code", idle_nudge_s=1, idle_timeout_s=3,
                           kill_grace_s=0.5, liveness="output")
    assert (run.outcome.result, run.outcome.reason.value) == (71, "idle_timeout")
    (nudge,) = run.named("nudge")
    assert nudge["state"] is None
    assert "no output for 3s; killing the agent tree\n" in run.text
    assert run.named("liveness") == []


def test_the_flags_reach_the_attempt(run_aidd: RunAidd, env: dict[str, str],
                                     fake_agent: FakeAgent, project: Path) -> None:
    """Through the real aidd: --liveness signals (the default) watches the project's files,
    so an agent that only writes files for 4 s is not killed at --idle-timeout 2."""
    steps: list[dict[str, object]] = [{"init": True}]
    for i in range(8):
        steps += [{"write_file": f"w{i}.txt", "text": "x"}, {"sleep": 0.5}]
    fake_agent.script([*steps, {"tool": {"name": "write"}}, {"say": "done"}, {"finish": True}])
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", "--idle-timeout", "2",
                   "--idle-nudge-timeout", "0", "--timeout", "30", "--busy-timeout", "20",
                   env=env)
    assert res.code == 0, res.out[-3000:] + res.err
    assert events(project, "kill") == []
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", "--idle-timeout", "2",
                   "--idle-nudge-timeout", "0", "--timeout", "30", "--liveness", "output",
                   "--quit-on-abort", "1", env=env)
    assert res.code == 71, res.out[-3000:] + res.err
    assert [e["reason"] for e in events(project, "kill")] == ["idle"]


def test_a_bad_liveness_value_is_one_line_naming_the_flag(run_aidd: RunAidd, env: dict[str, str],
                                                         project: Path) -> None:
    res = run_aidd("--project-dir", str(project), "--liveness", "cpu", env=env)
    assert res.code == 2
    assert "--liveness" in res.err
    assert "signals, output" in res.err
    assert len(res.err.strip().splitlines()) == 1
