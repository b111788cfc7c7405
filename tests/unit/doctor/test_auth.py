"""The login probe's verdict, by each adapter's own parser, on recorded-shape output."""

from __future__ import annotations

import json

from aidd.agents.registry import ADAPTERS
from aidd.doctor.auth import judge
from aidd.doctor.findings import Status
from aidd.errors import ExitCode

CLAUDE = ADAPTERS["claude-code"]
OPENCODE = ADAPTERS["opencode"]


def lines(*events: dict[str, object]) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in events)


CLAUDE_INIT = {"type": "system", "subtype": "init", "session_id": "s1", "model": "m-1"}
CLAUDE_OK = lines(CLAUDE_INIT, {"type": "assistant", "message": {"id": "a", "content": [
    {"type": "text", "text": "OK"}]}}, {"type": "result", "subtype": "success",
                                         "is_error": False, "result": "OK"})
CLAUDE_401 = lines(CLAUDE_INIT, {"type": "result", "subtype": "success", "is_error": True,
                                 "api_error_status": 401,
                                 "result": "Invalid API key · Please run /login"})


def test_claude_answering_is_ok_with_its_model() -> None:
    found = judge(CLAUDE, CLAUDE_OK, 1.25)
    assert found.status is Status.OK
    assert "answered a test prompt in 1.2 s (model m-1)" in found.detail


def test_claude_refusing_the_key_fails_with_8_and_the_login_fix() -> None:
    found = judge(CLAUDE, CLAUDE_401, 2.0)
    assert (found.status, found.code, found.blocks_run) == (Status.FAIL, ExitCode.CLI_ERROR, True)
    assert "Invalid API key" in found.detail
    assert "claude auth login" in found.fix
    assert "ANTHROPIC_API_KEY" in found.fix


def test_claude_refusing_root_in_plain_text_fails() -> None:
    out = (b"\x1b[31m--dangerously-skip-permissions cannot be used with root/sudo privileges "
           b"for security reasons\x1b[0m\n")
    found = judge(CLAUDE, out, 0.3)
    assert found.status is Status.FAIL
    assert "root/sudo" in found.detail
    assert "\x1b" not in found.detail


def test_opencode_401_fails_a_429_or_a_5xx_only_warns() -> None:
    def error(status: int, message: str) -> bytes:
        return lines({"type": "error", "error": {"name": "APIError", "data": {
            "message": message, "statusCode": status}}})

    refused = judge(OPENCODE, error(401, "Unauthorized"), 1.0)
    assert (refused.status, refused.code) == (Status.FAIL, ExitCode.CLI_ERROR)
    assert "opencode auth login" in refused.fix
    limited = judge(OPENCODE, error(429, "Rate limit reached"), 1.0)
    assert limited.status is Status.WARN
    assert "rate-limited" in limited.detail
    assert judge(OPENCODE, error(500, "Internal"), 1.0).status is Status.WARN


def test_opencode_text_is_ok_and_no_answer_at_all_warns_with_the_last_line() -> None:
    text = lines({"type": "text", "sessionID": "ses_1", "part": {"type": "text", "text": "OK"}})
    assert judge(OPENCODE, text, 3.0).status is Status.OK
    silent = judge(OPENCODE, b"some banner\nlast words\n", 3.0)
    assert silent.status is Status.WARN
    assert "last words" in silent.detail
