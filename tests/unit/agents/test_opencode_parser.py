"""opencode/kilo `run --format json`: rendering, totals, terminal events, classification
(ADP-35, ADP-37..39, ADP-42)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from aidd.agents.base import ErrorKind, Tokens
from aidd.agents.opencode import RunJsonParser

SID = "ses_4a1b2c3d4e5f"


def event(kind: str, part: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "timestamp": 1, "sessionID": SID, "part": part or {}, **extra}


def error(name: str, message: str, status: int | str | None = None,
          headers: dict[str, str] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"message": message}
    if status is not None:
        data["statusCode"] = status
    if headers is not None:
        data["responseHeaders"] = headers
    return {"type": "error", "sessionID": SID, "error": {"name": name, "data": data}}


def finish(reason: str = "stop", cost: float = 0.01, **tokens: Any) -> dict[str, Any]:
    raw = {"input": 100, "output": 20, "reasoning": 3, "cache": {"read": 50, "write": 7}}
    return event("step_finish", {"type": "step-finish", "reason": reason, "cost": cost,
                                 "tokens": {**raw, **tokens}})


def feed(*items: dict[str, Any] | bytes) -> tuple[RunJsonParser, list[str]]:
    parser = RunJsonParser()
    lines: list[str] = []
    for item in items:
        lines += parser.line(item if isinstance(item, bytes) else json.dumps(item).encode())
    return parser, lines


@pytest.mark.parametrize(
    ("item", "rendered"),
    [
        (event("step_start", {"type": "step-start"}), []),
        (event("text", {"type": "text", "text": "Plan:\n1. read"}),
         ["assistant: Plan:", "  1. read"]),
        (event("text", {"type": "text", "text": "   "}), []),
        (event("tool_use", {"tool": "bash", "state": {
            "status": "completed", "input": {"command": "ls -la"}, "output": "a\nb"}}),
         ["tool: bash ls -la [completed]", "result: a b"]),
        (event("tool_use", {"tool": "read", "state": {
            "status": "running", "input": {"filePath": "/p/x.py"}}}),
         ["tool: read /p/x.py [running]"]),
        (event("tool_use", {"tool": "edit", "state": {
            "status": "error", "input": {"filePath": "x"}, "error": "no match"}}),
         ["tool: edit x [error]", "result: error: no match"]),
        (finish(), ["tokens: in 100 · out 20 · reasoning 3 · cache read 50 · cache write 7"]),
        (finish(input=0, output=0, reasoning=0, cache={"read": 0, "write": 0}), []),
        (error("APIError", "Internal server error", 500),
         ["error: APIError: Internal server error (status 500)"]),
        (error("UnknownError", "boom"), ["error: UnknownError: boom"]),
        (b"\x1b[91m\x1b[1mError: \x1b[0mModel not found", []),
        (b"opencode v1.18 banner", []),
    ],
)
def test_rendering(item: dict[str, Any] | bytes, rendered: list[str]) -> None:
    assert feed(item)[1] == rendered


def test_totals_sum_every_step() -> None:
    parser, _ = feed(finish("tool-calls", cost=0.01), finish("stop", cost=0.02))
    assert parser.signals.tokens == Tokens(200, 40, 6, 100, 14)
    assert parser.signals.cost_usd == pytest.approx(0.03)


def test_terminal_events() -> None:
    parser, _ = feed(finish("tool-calls"))
    assert parser.signals.turns_ended == 0
    parser, _ = feed(finish("tool-calls"), finish("stop"))
    assert (parser.signals.turns_ended, parser.signals.last_turn_ok) == (1, True)
    parser, _ = feed(error("APIError", "x", 500))
    assert (parser.signals.turns_ended, parser.signals.last_turn_ok) == (1, False)


def test_signals_of_a_normal_run() -> None:
    parser, _ = feed(event("step_start"), event("text", {"type": "text", "text": "hi"}))
    assert parser.signals.conversation_id == SID
    assert parser.signals.assistant_seen
    assert parser.signals.error is None
    tool_only = feed(event("tool_use", {"tool": "bash", "state": {"status": "completed"}}))[0]
    assert tool_only.signals.assistant_seen


def test_tool_calls_and_assistant_text_are_counted() -> None:
    """One tool_use event per call, when it completes or fails (opencode and kilo alike)."""
    parser, _ = feed(event("step_start"), event("text", {"type": "text", "text": "Plan: read"}),
                     event("tool_use", {"tool": "read", "state": {"status": "completed"}}),
                     event("tool_use", {"tool": "bash", "state": {"status": "error"}}),
                     finish("tool-calls"), event("text", {"type": "text", "text": "Done."}),
                     event("text", {"type": "text", "text": " "}), finish())
    assert (parser.signals.tool_calls, parser.signals.assistant_chars) == (2, 15)
    silent = feed(event("step_start"), finish())[0]
    assert (silent.signals.tool_calls, silent.signals.assistant_chars) == (0, 0)


@pytest.mark.parametrize(
    ("item", "kind", "status"),
    [
        (error("APIError", "Too Many Requests", 429, {"retry-after": "30"}),
         ErrorKind.RATE_LIMIT, 429),
        (error("APIError", "Rate limit exceeded for model"), ErrorKind.RATE_LIMIT, None),
        (error("ProviderError", "Usage limit reached, resets 2am"), ErrorKind.RATE_LIMIT, None),
        (error("APIError", "Unauthorized", "401"), ErrorKind.FATAL, 401),
        (error("ProviderAuthError", "missing credentials"), ErrorKind.FATAL, None),
        (error("APIError", "forbidden", 403), ErrorKind.FATAL, 403),
        (error("UnknownError", "The model returned no assistant message"),
         ErrorKind.NO_ASSISTANT, None),
        (error("APIError", "Internal server error", 500), ErrorKind.PROVIDER, 500),
        (error("APIError", "Provider returned error"), ErrorKind.PROVIDER, None),
        (error("APIError", "Cannot connect to API: ECONNREFUSED"), ErrorKind.PROVIDER, None),
        (b"Error: Too many requests", ErrorKind.RATE_LIMIT, None),
        ({"type": "error", "sessionID": SID,
          "error": "run ended with an auto-rejected permission; pass --auto for autonomous use"},
         ErrorKind.FATAL, None),
        (b"\x1b[91m\x1b[1mError: \x1b[0mrun ended with an auto-rejected permission",
         ErrorKind.FATAL, None),
        (b"\x1b[91mError: \x1b[0mSomething exploded", ErrorKind.PROVIDER, None),
        # opencode 1.18 and kilo 7.7 against the mock's 400 (tests/fixtures/realcli)
        (error("ContextOverflowError", "This model's maximum context length is 128000 "
               "tokens. However, your messages resulted in 210000 tokens."),
         ErrorKind.CONTEXT, None),
        (error("ContextOverflowError", "Compaction exhausted: context still exceeds model "
               "limits after 3 attempts"), ErrorKind.CONTEXT, None),
        (error("APIError", "prompt is too long: 210000 tokens > 200000 maximum", 400),
         ErrorKind.CONTEXT, 400),
        (b"\x1b[91m\x1b[1mError: \x1b[0mThis model's maximum context length is 128000 tokens",
         ErrorKind.CONTEXT, None),
    ],
)
def test_classification(item: dict[str, Any] | bytes, kind: ErrorKind,
                        status: int | None) -> None:
    parser, _ = feed(item)
    assert parser.signals.error is not None
    assert (parser.signals.error.kind, parser.signals.error.status) == (kind, status)


def test_work_after_a_compaction_clears_the_context_overflow() -> None:
    """opencode and kilo compact after an overflow (tests/fixtures/realcli/*/context_overflow):
    a tool call after it means the conversation went on; another overflow counts again."""
    overflow = error("ContextOverflowError", "maximum context length is 128000 tokens")
    tool = event("tool_use", {"tool": "write", "state": {"status": "completed",
                                                         "input": {"filePath": "a.py"}}})
    parser, _ = feed(overflow, event("text", {"type": "text", "text": "summary"}), finish(),
                     tool, finish())
    assert parser.signals.error is None
    parser, _ = feed(overflow, tool, overflow)
    assert parser.signals.error is not None
    assert parser.signals.error.kind is ErrorKind.CONTEXT


def test_reset_headers_are_read_case_insensitively() -> None:
    parser, _ = feed(error("APIError", "slow down", 429,
                           {"Retry-After": "30", "Retry-After-Ms": "30000"}))
    info = parser.signals.rate_limit
    assert (info.retry_after, info.retry_after_ms, info.message) == ("30", "30000", "slow down")


def test_agent_content_never_classifies() -> None:
    """AC-33: phrases in text and tool output are content, not signals."""
    text = ('hit your limit; Provider returned error; The model returned no assistant '
            'messages; "error":"rate_limit"; Error: 429; maximum context length exceeded')
    parser, _ = feed(
        event("text", {"type": "text", "text": text}),
        event("tool_use", {"tool": "write", "state": {
            "status": "completed", "input": {"filePath": "rl.py", "content": text},
            "output": text}}),
        finish(),
    )
    assert parser.signals.error is None


def test_garbage_never_raises() -> None:
    parser, lines = feed(b'{"type":"text","part":"str"}', b'{"type":"step_finish","part":'
                         b'{"tokens":"x","cost":"y"}}', b'{"type":"error","error":7}',
                         b'{"type":"tool_use","part":{"state":[]}}', b"\xff{", b"[]", b"{")
    assert parser.signals.json_seen
    assert parser.signals.error is not None  # the malformed error event is still an error
    assert parser.signals.error.kind is ErrorKind.PROVIDER
    assert "error: Error:" in lines


# -- numbers the CLI prints are untrusted (issue 27) ---------------------------------------------
@pytest.mark.parametrize("forged", [float("nan"), float("-inf"), -0.5, 1e12])
def test_one_impossible_step_cost_makes_the_attempts_cost_unknown(forged: float) -> None:
    parser, _ = feed(finish("tool-calls", cost=0.25), finish(cost=forged), finish(cost=0.25))
    assert parser.signals.cost_usd is None  # never 0.5: the forged step cost something too
    assert list(parser.signals.refused) == ["cost_usd"]
    assert parser.signals.turns_ended == 2


def test_impossible_step_tokens_count_nothing_and_the_step_still_ends() -> None:
    parser, lines = feed(finish(input=float("nan"), output=-20, cache={"read": 1e40, "write": 7}))
    assert parser.signals.tokens == Tokens(reasoning=3, cache_write=7)
    assert parser.signals.turns_ended == 1
    assert set(parser.signals.refused) == {"input", "output", "cache.read"}
    assert lines == ["tokens: in 0 · out 0 · reasoning 3 · cache write 7"]


@pytest.mark.parametrize(("data", "wanted"), [
    (b"x" * 99 + b"\n", False),  # no capital E: the word is never searched for
    (b"Every line is plain\nEEE\n", False),
    (b"plain\nError: boom\n", True),
    (b"\x1b[31mError:\x1b[0m boom", True),
    (b'{"type":"text"}', True),
])
def test_the_router_skips_only_what_cannot_be_a_json_or_error_line(data: bytes,
                                                                    wanted: bool) -> None:
    assert RunJsonParser().wants(data) is wanted
