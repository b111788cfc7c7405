"""Two-stage idle supervision with nudges that reach the agent (SUP-20..24, ADP-30..33;
AC-36..39): one attempt in-process, then every CLI through the real aidd."""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.fakes.attempt import DEFAULTS, pid_alive, run_fake_attempt
from tests.integration.runs import READ
from tests.integration.scenario import SLACK_S, MakeScenario, alive, nudge_text, run_together

NUDGE = DEFAULTS["nudge_text"]


@pytest.mark.parametrize("cli", ["claude-code", "opencode"])
def test_silent_agent_is_nudged_then_killed(fake_agent: FakeAgent, tmp_path: Path,
                                           cli: str) -> None:
    """AC-36: nudge at about 1 s (line and text in the log), kill at about 3 s, result 71."""
    fake_agent.script([{"init": True}, {"sleep": 60}], [{"sleep": 60}])
    run = run_fake_attempt(tmp_path, cli, idle_nudge_s=1, idle_timeout_s=3, kill_grace_s=0.5)
    assert (run.outcome.result, run.outcome.reason.value) == (71, "idle_timeout")
    (nudge,) = run.named("nudge")
    assert nudge["delivered"] is True
    assert 0.95 <= nudge["silence_s"] <= 1.5
    assert "nudge sent" in run.text
    assert NUDGE in run.text
    (kill,) = run.named("kill")
    assert kill["reason"] == "idle"
    assert 2.9 < run.elapsed_s < 3 + 0.5 + 1.5
    assert "no output for 3s; killing the agent tree" in run.text
    assert not any(pid_alive(r["pid"]) for r in fake_agent.records())


def test_claude_receives_the_nudge_on_stdin(fake_agent: FakeAgent, tmp_path: Path) -> None:
    """AC-37: the fake echoes its stdin; the nudge text comes back; exit 0 -> result 0."""
    fake_agent.script([{"init": True}, {"echo_stdin": 1}, {"result": {}}])
    run = run_fake_attempt(tmp_path, "claude-code", idle_nudge_s=0.5, idle_timeout_s=5)
    assert run.outcome.result == 0
    assert fake_agent.stdin_texts(0) == [NUDGE]
    assert f"» assistant: echo: {NUDGE}".encode() in run.log
    assert run.log.index(b"nudge sent (stdin)") < run.log.index(b"echo: ")
    assert run.named("nudge")[0]["method"] == "stdin"


@pytest.mark.parametrize(("cli", "binary"), [("opencode", "opencode"), ("kilocode", "kilo")])
def test_opencode_is_resumed_with_the_nudge(fake_agent: FakeAgent, tmp_path: Path, cli: str,
                                            binary: str) -> None:
    """AC-38: interrupted, relaunched with --session <id>, the nudge on stdin, same log."""
    fake_agent.script(
        [{"session": "ses_X"}, {"init": True}, {"sleep": 60}],
        [{"session": "ses_X"}, {"say": "Resuming after the nudge"}, {"finish": True}],
    )
    run = run_fake_attempt(tmp_path, cli, model="prov/m", idle_nudge_s=0.5, idle_timeout_s=5)
    first, second = fake_agent.records()
    assert first["name"] == second["name"] == binary
    assert second["argv"] == ["run", "--format", "json", "--session", "ses_X", "--auto",
                              "--model", "prov/m"]
    assert second["stdin_sha256"] == hashlib.sha256(NUDGE.encode()).hexdigest()
    assert not pid_alive(first["pid"])
    assert run.outcome.result == 0
    assert (run.outcome.launches, run.outcome.nudges) == (2, 1)
    assert run.outcome.conversation_id == "ses_X"
    assert re.search(rb"nudge sent \(relaunch\)( \[.*\])? alone: conversation ses_X holds the "
                     rb"task\n", run.log)
    assert "» assistant: Resuming after the nudge".encode() in run.log


def test_relaunch_kills_an_agent_that_ignores_the_interrupt(
        fake_agent: FakeAgent, tmp_path: Path) -> None:
    fake_agent.script([{"init": True}, {"ignore": ["INT"]}, {"sleep": 60}],
                      [{"say": "back"}, {"finish": True}])
    run = run_fake_attempt(tmp_path, "opencode", idle_nudge_s=0.5, idle_timeout_s=5,
                           kill_grace_s=0.3)
    (kill,) = run.named("kill")
    assert kill["reason"] == "nudge"
    assert run.outcome.result == 0
    assert not pid_alive(fake_agent.records()[0]["pid"])


def test_a_nudge_before_any_conversation_starts_one_with_the_task(
        fake_agent: FakeAgent, tmp_path: Path) -> None:
    """Issue 17: no id printed and none listed: a fresh run gets the prompt, then the nudge."""
    fake_agent.script([{"line": "no JSON here"}, {"sleep": 60}],
                      [{"session": "ses_new"}, {"init": True}, {"say": "on it"}, {"finish": True}])
    run = run_fake_attempt(tmp_path, "opencode", prompt="THE TASK", idle_nudge_s=0.3,
                           idle_timeout_s=5, kill_grace_s=0.3)
    second = fake_agent.records()[1]
    assert second["argv"] == ["run", "--format", "json", "--auto"]
    assert second["stdin_sha256"] == hashlib.sha256(f"THE TASK\n\n{NUDGE}".encode()).hexdigest()
    (nudge,) = run.named("nudge")
    assert (nudge["delivered"], nudge["with_task"], nudge["task_check"]) == (True, True, "none")
    assert re.search(rb"nudge sent \(relaunch\)( \[.*\])? with the original task: the agent "
                     rb"had started no conversation yet\n", run.log)
    assert run.outcome.result == 0
    assert run.outcome.conversation_id == "ses_new"


def test_a_listed_conversation_without_the_prompt_is_resumed_with_it(
        fake_agent: FakeAgent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """kilo lists its session seconds before it stores the prompt there (export: none)."""
    project = (tmp_path / "project").resolve()
    monkeypatch.setenv("FAKE_AGENT_SESSIONS", json.dumps(
        [{"id": "ses_L", "created": time.time() * 1000, "directory": str(project)}]))
    monkeypatch.setenv("FAKE_AGENT_EXPORT", json.dumps({"info": {"id": "ses_L"},
                                                        "messages": []}))
    fake_agent.script([{"sleep": 60}], [{"session": "ses_L"}, {"init": True}, {"say": "on it"},
                                        {"finish": True}])
    run = run_fake_attempt(tmp_path, "kilocode", prompt="THE TASK", idle_nudge_s=0.5,
                           idle_timeout_s=8, kill_grace_s=0.3)
    second = fake_agent.records()[1]
    assert second["argv"] == ["run", "--format", "json", "--session", "ses_L", "--auto"]
    assert second["stdin_sha256"] == hashlib.sha256(f"THE TASK\n\n{NUDGE}".encode()).hexdigest()
    (nudge,) = run.named("nudge")
    assert (nudge["with_task"], nudge["task_check"], nudge["conversation"]) == (
        True, "export", "ses_L")
    assert b"with the original task: conversation ses_L did not hold it yet" in run.log
    assert run.outcome.result == 0


def test_output_restarts_stage_one(fake_agent: FakeAgent, tmp_path: Path) -> None:
    """AC-39: a byte (no newline) every 0.8 s under a 1 s nudge is never nudged or killed."""
    fake_agent.script([{"init": True}, {"drip": ".", "every": 0.8, "count": 4}, {"line": ""},
                       {"say": "finished"}, {"finish": True}])
    run = run_fake_attempt(tmp_path, "opencode", idle_nudge_s=1, idle_timeout_s=2)
    assert run.outcome.result == 0
    assert run.outcome.nudges == 0
    assert run.named("kill") == []


def test_claude_gets_nudged_again_after_answering(fake_agent: FakeAgent,
                                                  tmp_path: Path) -> None:
    """Output after a nudge restarts stage 1, so a second silence brings a second nudge."""
    fake_agent.script([{"init": True}, {"echo_stdin": 1}, {"echo_stdin": 1},
                       {"result": {}}])
    run = run_fake_attempt(tmp_path, "claude-code", idle_nudge_s=0.4, idle_timeout_s=5)
    assert run.outcome.result == 0
    assert run.outcome.nudges == 2
    assert fake_agent.stdin_texts(0) == [NUDGE, NUDGE]


def test_claude_stdin_closes_after_the_result(fake_agent: FakeAgent, tmp_path: Path) -> None:
    """ADP-31: a result with no nudge outstanding closes stdin, so the CLI can exit."""
    fake_agent.script([{"init": True}, {"say": "hi"}, {"result": {}}, {"read_stdin": True}])
    run = run_fake_attempt(tmp_path, "claude-code", idle_nudge_s=0, idle_timeout_s=10)
    assert run.outcome.result == 0
    assert fake_agent.stdin_texts(0)[0].startswith("<EOF after 0 bytes")
    assert run.elapsed_s < 3


def test_nudge_at_or_after_the_idle_timeout_is_no_nudge(fake_agent: FakeAgent,
                                                        tmp_path: Path) -> None:
    fake_agent.script([{"init": True}, {"sleep": 60}])
    run = run_fake_attempt(tmp_path, "claude-code", idle_nudge_s=2, idle_timeout_s=1,
                           kill_grace_s=0.3)
    assert run.outcome.result == 71
    assert run.named("nudge") == []
    assert run.elapsed_s < 3


# -- through the real aidd, every CLI at once ------------------------------------------------
def test_nudges_reach_every_cli_and_output_restarts_stage_one(
        scenario: MakeScenario) -> None:
    """Each fake goes silent twice; the second nudge proves the answer restarted stage 1
    (without a reset, stage 2 would run on to the kill at 20 s with no second nudge)."""
    silent = {"sleep": 30}
    started = {"mark": "started"}
    claude = scenario("claude-code", [{"init": True}, started, READ, {"say": "working"},
                                      {"echo_stdin": 1}, {"echo_stdin": 1}, {"result": {}}],
                      args=("--max-iterations", "1", "--idle-nudge-timeout", "1",
                            "--idle-timeout", "20"))
    relaunched = [
        scenario(cli, [{"session": "ses_X"}, {"init": True}, started, READ, {"say": "working"},
                       silent],
                 [{"session": "ses_X"}, {"say": "back once"}, silent],
                 [{"session": "ses_X"}, {"say": "back twice"}, {"finish": True}],
                 args=("--max-iterations", "1", "--idle-nudge-timeout", "1",
                       "--idle-timeout", "20"))
        for cli in ("opencode", "kilocode")
    ]
    run_together([claude, *relaunched])
    for s in (claude, *relaunched):
        assert s.code == 0, s.err
        (end,) = s.named("iteration_end")
        assert end["result"] == 0
        nudges = s.named("nudge")
        assert [n["delivered"] for n in nudges] == [True, True]
        assert all(0.95 <= n["silence_s"] <= 2.0 for n in nudges), nudges
        assert s.named("kill") == [] or all(k["reason"] == "nudge" for k in s.named("kill"))
        assert s.since("started") < 2 + 2 * SLACK_S
    text = nudge_text(claude)
    assert len(text) > 20
    received = [t.rstrip("\n") for t in claude.fake.stdin_texts(0)]
    assert received == [text, text]  # user messages on stream-json stdin
    assert f"» assistant: echo: {text.splitlines()[0]}" in claude.out
    assert claude.log().count("nudge sent (stdin)") == 2
    for s in relaunched:
        first, second, third = s.fake.records()
        digest = hashlib.sha256(f"{nudge_text(s)}\n".encode()).hexdigest()
        for later in (second, third):
            assert later["argv"][:5] == ["run", "--format", "json", "--session", "ses_X"]
            assert later["stdin_sha256"] == digest  # the nudge, alone, then EOF
        assert alive([first["pid"], second["pid"]]) == []
        assert s.log().count("nudge sent (relaunch)") == 2
        assert "» assistant: back twice" in s.out
