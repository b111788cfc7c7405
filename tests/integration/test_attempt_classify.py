"""Results from structured signals, end to end through a real pty (ADP-40..45, EXIT-3, EXIT-5;
AC-31..35)."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from aidd.agents.ratelimit import WakeSource
from tests.conftest import FakeAgent
from tests.fakes.attempt import run_fake_attempt

BERLIN = ZoneInfo("Europe/Berlin")


def test_claude_rate_limit_event_with_reset(fake_agent: FakeAgent, tmp_path: Path) -> None:
    """AC-31: rejected, resetsAt 2 min ahead -> 74; wake = resetsAt + buffer."""
    resets_at = int(time.time()) + 120
    fake_agent.script([{"init": True}, {"json": {"type": "rate_limit_event", "rate_limit_info": {
        "status": "rejected", "resetsAt": resets_at, "rateLimitType": "five_hour"}}},
        {"result": {"is_error": True, "result": "You've hit your limit · resets 2am",
                    "api_error_status": 429}}, {"exit": 1}])
    run = run_fake_attempt(tmp_path, "claude-code")
    assert (run.outcome.result, run.outcome.outcome.value) == (74, "rate_limited")
    wake = run.outcome.wake
    assert wake is not None
    assert wake.source is WakeSource.RATE_LIMIT_EVENT
    assert wake.at.timestamp() == resets_at + 60
    assert "» rate limit: rejected five_hour, resets".encode() in run.log


def test_claude_limit_message_with_a_zone(fake_agent: FakeAgent, tmp_path: Path) -> None:
    """AC-31: `resets 2am (Europe/Berlin)` -> the next 02:00 in Berlin + 60 s."""
    fake_agent.script([{"init": True}, {"result": {
        "is_error": True, "api_error_status": 429,
        "result": "You've hit your limit · resets 2am (Europe/Berlin)"}}, {"exit": 1}])
    run = run_fake_attempt(tmp_path, "claude-code")
    assert run.outcome.result == 74
    wake = run.outcome.wake
    assert wake is not None
    assert wake.source is WakeSource.MESSAGE
    assert wake.reset is not None
    berlin = wake.reset.astimezone(BERLIN)
    assert (berlin.hour, berlin.minute) == (2, 0)
    now = datetime.now(BERLIN)
    assert now < wake.reset <= now + timedelta(days=1)
    assert wake.at - wake.reset == timedelta(seconds=60)
    assert "resets 2am (Europe/Berlin)" in wake.message


@pytest.mark.parametrize("cli", ["opencode", "kilocode"])
def test_opencode_429_with_retry_after(fake_agent: FakeAgent, tmp_path: Path, cli: str) -> None:
    """AC-32: retry-after 30 -> sleep 30 s + buffer."""
    fake_agent.script([{"init": True}, {"error": {
        "name": "APIError", "message": "Too Many Requests", "status": 429,
        "headers": {"retry-after": "30"}}}, {"exit": 1}])
    before = datetime.now().astimezone()
    run = run_fake_attempt(tmp_path, cli, rate_limit_buffer_s=60)
    assert run.outcome.result == 74
    wake = run.outcome.wake
    assert wake is not None
    assert wake.source is WakeSource.RETRY_AFTER
    assert 89 <= (wake.at - before).total_seconds() <= 95


def test_unparsable_limit_message_gives_the_fallback(fake_agent: FakeAgent,
                                                     tmp_path: Path) -> None:
    fake_agent.script([{"init": True}, {"error": {"name": "APIError",
                                                  "message": "rate limit exceeded"}}])
    run = run_fake_attempt(tmp_path, "opencode", rate_limit_fallback_s=1)
    assert run.outcome.result == 74
    assert run.outcome.wake is not None
    assert run.outcome.wake.source is WakeSource.FALLBACK


@pytest.mark.parametrize(
    ("cli", "steps", "result", "reason"),
    [
        ("opencode", [{"init": True}, {"error": {"name": "APIError", "message": "Internal",
                                                 "status": 500}}, {"exit": 1}],
         72, "provider_error"),
        ("kilocode", [{"init": True}, {"error": {
            "name": "UnknownError", "message": "The model returned no assistant message"}}],
         70, "no_assistant"),
        ("opencode", [{"line": "\x1b[91mError:\x1b[0m Provider returned error"}, {"exit": 1}],
         72, "provider_error"),
        ("claude-code", [{"init": True}, {"result": {
            "is_error": True, "result": "API Error: 529 Overloaded", "api_error_status": 529}},
            {"exit": 1}], 72, "provider_error"),
        ("claude-code", [{"init": True}, {"result": {"result": ""}}], 70, "no_assistant"),
        ("opencode", [{"init": True}, {"finish": True}], 70, "no_assistant"),
    ],
)
def test_error_results(fake_agent: FakeAgent, tmp_path: Path, cli: str,
                       steps: list[dict[str, Any]], result: int, reason: str) -> None:
    """AC-32."""
    fake_agent.script(steps)
    run = run_fake_attempt(tmp_path, cli)
    assert (run.outcome.result, run.outcome.reason.value) == (result, reason)


def test_claude_401_is_fatal(fake_agent: FakeAgent, tmp_path: Path) -> None:
    """AC-34: result 8, outcome fatal, the message names the cause."""
    fake_agent.script([{"init": True}, {"result": {
        "is_error": True, "api_error_status": 401,
        "result": "Invalid API key · Please run /login"}}, {"exit": 1}])
    run = run_fake_attempt(tmp_path, "claude-code")
    assert (run.outcome.result, run.outcome.outcome.value) == (8, "fatal")
    assert run.outcome.message == "Invalid API key · Please run /login"


def test_claude_refusing_to_start_is_fatal(fake_agent: FakeAgent, tmp_path: Path) -> None:
    fake_agent.script([{"line": "--dangerously-skip-permissions cannot be used with "
                                "root/sudo privileges for security reasons"}, {"exit": 1}])
    run = run_fake_attempt(tmp_path, "claude-code")
    assert (run.outcome.result, run.outcome.outcome.value) == (8, "fatal")


@pytest.mark.parametrize("cli", ["opencode", "claude-code"])
def test_agent_content_about_limits_is_not_a_signal(fake_agent: FakeAgent, tmp_path: Path,
                                                    cli: str) -> None:
    """AC-33: limit phrases in assistant text and tool output; exit 0 -> result 0."""
    text = ('hit your limit / Provider returned error / The model returned no assistant '
            'messages / "error":"rate_limit"')
    fake_agent.script([{"init": True}, {"say": text},
                       {"tool": {"name": "write", "input": {"filePath": "rl.ts", "content": text},
                                 "output": text}},
                       {"finish": True}])
    run = run_fake_attempt(tmp_path, cli)
    assert (run.outcome.result, run.outcome.reason.value) == (0, "exit_status")


@pytest.mark.parametrize(
    ("cli", "result", "outcome", "reason"),
    [
        ("opencode", 0, "success", "exit1_success"),
        ("kilocode", 0, "success", "exit1_success"),
        ("claude-code", 1, "failure", "exit_status"),
    ],
)
def test_exit_one(fake_agent: FakeAgent, tmp_path: Path, cli: str, result: int, outcome: str,
                  reason: str) -> None:
    """AC-35: opencode/kilo exit 1 without an error event is success; claude exit 1 fails."""
    fake_agent.script([{"init": True}, {"say": "nothing left to do"}, {"exit": 1}])
    run = run_fake_attempt(tmp_path, cli)
    assert (run.outcome.result, run.outcome.outcome.value, run.outcome.reason.value) == (
        result, outcome, reason)
    assert run.outcome.exit_status == 1
    assert (b"exit 1 treated as success" in run.log) is (reason == "exit1_success")


def test_other_exit_statuses_are_failures(fake_agent: FakeAgent, tmp_path: Path) -> None:
    fake_agent.script([{"init": True}, {"say": "hm"}, {"exit": 3}])
    run = run_fake_attempt(tmp_path, "opencode")
    assert (run.outcome.result, run.outcome.outcome.value) == (3, "failure")
