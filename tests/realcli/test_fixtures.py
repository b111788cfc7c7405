"""The recorded real-CLI outputs still show the shapes the adapters rely on (fast, no CLI).

Re-record with `python -m tests.realcli.record` after a CLI upgrade; a changed format then fails
here with the case that changed. docs/real-clis.md explains each behaviour.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "realcli"
OPEN_CLIS = ("opencode", "kilo")


@cache
def meta(cli: str, case: str) -> dict[str, Any]:
    path = FIXTURES / cli / f"{case}.json-meta"
    if not path.exists():
        pytest.skip(f"no recording {path.relative_to(FIXTURES)}")
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def events(cli: str, case: str, suffix: str = "stdout") -> list[dict[str, Any]]:
    meta(cli, case)  # skips when missing
    raw = (FIXTURES / cli / f"{case}.{suffix}").read_bytes()
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def of_type(evs: list[dict[str, Any]], kind: str, sub: str | None = None) -> list[dict[str, Any]]:
    return [e for e in evs if e.get("type") == kind and (sub is None or e.get("subtype") == sub)]


def test_claude_hello_init_tool_use_and_result() -> None:
    evs = events("claude", "hello")
    init = of_type(evs, "system", "init")[0]
    tool = next(
        b
        for e in of_type(evs, "assistant")
        for b in e["message"]["content"]
        if b["type"] == "tool_use"
    )
    result = of_type(evs, "result")[-1]
    assert init["session_id"]
    assert init["model"]
    assert (tool["name"], sorted(tool["input"])) == ("Write", ["content", "file_path"])
    assert result["subtype"] == "success"
    assert result["is_error"] is False
    assert {"total_cost_usd", "num_turns", "duration_ms", "usage", "result"} <= set(result)
    assert meta("claude", "hello")["result"]["exit_code"] == 0


def test_claude_result_line_does_not_start_with_its_type() -> None:
    """A parser must decode the JSON: the `result` line starts with other keys."""
    raw = (FIXTURES / "claude" / "hello.stdout").read_bytes().splitlines()
    assert not raw[-1].startswith(b'{"type":"result"')
    assert json.loads(raw[-1])["type"] == "result"


@pytest.mark.parametrize(
    ("case", "status", "error"),
    [
        ("rate_limit_persistent", 429, "rate_limit"),
        ("server_error", 500, "server_error"),
        ("overloaded", 529, "overloaded"),
    ],
)
def test_claude_retries_ten_times_then_reports_the_status(
    case: str, status: int, error: str
) -> None:
    evs = events("claude", case)
    retries = of_type(evs, "system", "api_retry")
    result = of_type(evs, "result")[-1]
    assert [r["attempt"] for r in retries] == list(range(1, 11))
    assert {(r["max_retries"], r["error_status"], r["error"]) for r in retries} == {
        (10, status, error)
    }
    assert all(r["retry_delay_ms"] > 0 for r in retries)
    assert (result["is_error"], result["api_error_status"]) == (True, status)
    assert result["result"].startswith("API Error")
    assert meta("claude", case)["result"]["exit_code"] == 1
    assert not of_type(evs, "rate_limit_event")  # API-key auth: no rate_limit_event at all


def test_claude_auth_failure_is_retried_with_status_401() -> None:
    retries = of_type(events("claude", "auth_error"), "system", "api_retry")
    assert retries
    assert {(r["error_status"], r["error"]) for r in retries} == {(401, "authentication_failed")}


def test_claude_not_logged_in_is_a_synthetic_assistant_error() -> None:
    evs = events("claude", "not_logged_in")
    message = of_type(evs, "assistant")[0]
    assert message["error"] == "authentication_failed"
    assert message["message"]["content"][0]["text"].startswith("Not logged in")
    assert of_type(evs, "result")[-1]["is_error"] is True


def test_claude_refuses_root_without_is_sandbox_on_stderr() -> None:
    info = meta("claude", "refused_as_root")
    stderr = (FIXTURES / "claude" / "refused_as_root.stderr").read_bytes()
    assert (FIXTURES / "claude" / "refused_as_root.stdout").read_bytes() == b""
    assert b"cannot be used with root/sudo privileges" in stderr
    assert 1 in (info["result"]["exit_code"], info["result"].get("sigint_exit"))


def test_claude_nudge_waits_behind_a_hung_request() -> None:
    info = meta("claude", "hang")
    assert info["result"]["nudge_request_arrived"] is False
    assert info["result"]["sigint_exit"] == 0
    result = of_type(events("claude", "hang"), "result")[-1]
    assert (result["subtype"], result["terminal_reason"]) == (
        "error_during_execution",
        "aborted_streaming",
    )


def test_claude_interrupt_control_request_lets_the_nudge_through() -> None:
    info = meta("claude", "hang_interrupt")
    evs = events("claude", "hang_interrupt")
    assert info["result"]["nudge_request_arrived"] is True
    assert of_type(evs, "control_response")[0]["response"]["subtype"] == "success"
    assert [r["subtype"] for r in of_type(evs, "result")] == ["error_during_execution", "success"]
    assert [r["nudge"] for r in info["requests"]] == [False, True]


@pytest.mark.parametrize("cli", OPEN_CLIS)
def test_open_cli_hello_events_carry_the_session_id(cli: str) -> None:
    evs = events(cli, "hello")
    tool = next(e for e in evs if e["type"] == "tool_use")
    finishes = [e["part"]["reason"] for e in evs if e["type"] == "step_finish"]
    assert {e["sessionID"] for e in evs} == {meta(cli, "hello")["session_id"]}
    assert (tool["part"]["tool"], tool["part"]["state"]["status"]) == ("write", "completed")
    assert finishes == ["tool-calls", "stop"]
    assert {"input", "output", "reasoning", "cache"} <= set(evs[-1]["part"]["tokens"])


@pytest.mark.parametrize("cli", OPEN_CLIS)
@pytest.mark.parametrize(
    ("case", "status", "retryable"),
    [
        ("rate_limit_persistent", 429, True),
        ("server_error", 500, True),
        ("overloaded", 529, True),
        ("auth_error", 401, False),
    ],
)
def test_open_cli_error_event_carries_status_and_headers(
    cli: str, case: str, status: int, retryable: bool
) -> None:
    error = [e for e in events(cli, case) if e["type"] == "error"][-1]["error"]
    assert error["name"] == "APIError"
    assert (error["data"]["statusCode"], error["data"]["isRetryable"]) == (status, retryable)
    assert "responseHeaders" in error["data"]
    if status == 429:
        assert error["data"]["responseHeaders"]["retry-after"] == "1"
    assert meta(cli, case)["result"]["exit_code"] == 1


@pytest.mark.parametrize("cli", OPEN_CLIS)
def test_open_cli_retries_a_rate_limit_five_times_silently(cli: str) -> None:
    info = meta(cli, "rate_limit_persistent")
    assert sum(1 for r in info["requests"] if r["reply"] == "rate_limit") == 6
    assert [ln["kind"] for ln in info["stdout_lines"]] == ["error"]


@pytest.mark.parametrize("cli", OPEN_CLIS)
def test_open_cli_garbage_is_an_unknown_error(cli: str) -> None:
    error = [e for e in events(cli, "garbage") if e["type"] == "error"][-1]["error"]
    assert error["name"] == "UnknownError"
    assert "JSON parsing failed" in error["data"]["message"]


@pytest.mark.parametrize("cli", OPEN_CLIS)
def test_open_cli_says_nothing_before_the_first_model_byte(cli: str) -> None:
    """No sessionID during a first-turn hang: the relaunch needs `session list` (docs)."""
    result = meta(cli, "hang")["result"]
    assert result["stdout_bytes_during_silence"] == 0
    assert result["session_id_before_nudge"] is None
    assert result["sigint_exit"] == -2
    assert result["session_id_from_list"]
    assert result["relaunch"]["exit_code"] == 0
    relaunched = [r for r in meta(cli, "hang")["requests"] if r["nudge"]]
    assert relaunched
    assert relaunched[0]["prompt_contained"]  # the interrupted turn's prompt is kept


def test_kilo_without_auto_rejects_the_shell_tool() -> None:
    error = [e for e in events("kilo", "shell") if e["type"] == "error"][-1]
    assert isinstance(error["error"], str)  # not an object, unlike the API errors
    assert "auto-rejected permission" in error["error"]
    assert meta("kilo", "shell_auto")["result"]["exit_code"] == 0
    assert "shell-ran.txt" in meta("kilo", "shell_auto")["files_written"]


@pytest.mark.parametrize("cli", ["claude", *OPEN_CLIS])
def test_the_mib_prompt_arrived_byte_exact(cli: str) -> None:
    info = meta(cli, "big_prompt")
    assert info["prompt_bytes"] == 1 << 20
    assert any(r["prompt_exact"] for r in info["requests"] if r["primary"])


def test_opencode_ends_quietly_with_exit_0_after_an_auto_rejected_permission() -> None:
    """Without --auto the run stops mid-task: no error event, last step `tool-calls`, exit 0."""
    info = meta("opencode", "write_outside")
    stderr = (FIXTURES / "opencode" / "write_outside.stderr").read_bytes()
    assert info["result"]["exit_code"] == 0
    assert [ln["kind"] for ln in info["stdout_lines"]][-1] == "step_finish/tool-calls"
    assert b"permission requested: external_directory" in stderr
    assert b"auto-rejecting" in stderr
    assert info["files_written"] == []


def test_kilo_reports_an_auto_rejected_permission_as_an_error() -> None:
    info = meta("kilo", "write_outside")
    assert info["result"]["exit_code"] == 1
    assert [ln["kind"] for ln in info["stdout_lines"]][-1] == "error"


def test_claude_without_retries_reports_the_429_at_once() -> None:
    """CLAUDE_CODE_MAX_RETRIES=0 (documented): no api_retry, one request, the error result."""
    evs = events("claude", "rate_limit_no_retry")
    info = meta("claude", "rate_limit_no_retry")
    result = of_type(evs, "result")[-1]
    assert of_type(evs, "system", "api_retry") == []
    assert sum(1 for r in info["requests"] if r["primary"]) == 1
    assert (result["is_error"], result["api_error_status"]) == (True, 429)
    assert "rate_limit_event" not in {e.get("type") for e in evs}  # API key: none, ever
    assert info["result"]["duration_s"] < 10
