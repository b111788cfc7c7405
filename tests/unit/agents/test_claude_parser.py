"""claude stream-json: rendering, totals, terminal events, classification (ADP-35..41)."""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any

import pytest

from aidd.agents.base import ErrorKind, Tokens
from aidd.agents.claude_code import StreamJsonParser


def feed(*events: dict[str, Any] | bytes | str) -> tuple[StreamJsonParser, list[str]]:
    parser = StreamJsonParser(UTC)
    lines: list[str] = []
    for event in events:
        raw = event if isinstance(event, bytes) else (
            event.encode() if isinstance(event, str) else json.dumps(event).encode())
        lines += parser.line(raw)
    return parser, lines


INIT = {"type": "system", "subtype": "init", "session_id": "3f2a9c1e-aaaa-bbbb", "model": "opus"}


def assistant(*blocks: dict[str, Any], ident: str = "msg_1", usage: dict[str, int] | None = None,
              **extra: Any) -> dict[str, Any]:
    message = {"id": ident, "role": "assistant", "content": list(blocks)}
    if usage is not None:
        message["usage"] = usage
    return {"type": "assistant", "message": message, **extra}


def result(**fields: Any) -> dict[str, Any]:
    base = {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 65400,
            "num_turns": 3, "result": "Finished.", "total_cost_usd": 0.5,
            "usage": {"input_tokens": 10, "output_tokens": 20, "cache_read_input_tokens": 30}}
    return {**base, **fields}


@pytest.mark.parametrize(
    ("event", "rendered"),
    [
        (INIT, ["start · model opus · conversation 3f2a9c1e…"]),
        ({"type": "system", "subtype": "api_retry", "attempt": 2, "max_retries": 10,
          "retry_delay_ms": 1200, "error_status": 529, "error": "overloaded"},
         ["api retry 2/10 in 1200 ms (status 529, overloaded)"]),
        (assistant({"type": "text", "text": "Hello\nthere"}),
         ["assistant: Hello", "  there"]),
        (assistant({"type": "tool_use", "id": "toolu_0123456789abcdef", "name": "Edit",
                    "input": {"file_path": "src/app.py", "old_string": "a"}}),
         ["tool: Edit (toolu_012345…) src/app.py"]),
        (assistant({"type": "tool_use", "id": "toolu_1", "name": "Bash",
                    "input": {"command": "npm test\n  --watch=false"}}),
         ["tool: Bash (toolu_1…) npm test --watch=false"]),
        (assistant({"type": "tool_use", "id": "t", "name": "TodoWrite",
                    "input": {"todos": [1, 2]}}),
         ['tool: TodoWrite (t…) {"todos":[1,2]}']),
        ({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "toolu_0123456789abcdef",
             "content": "x" * 250}]}},
         [f"result: toolu_012345… {'x' * 200}… (250 chars)"]),
        ({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "toolu_9", "is_error": True,
             "content": [{"type": "text", "text": "No such file"}]}]}},
         ["result: error toolu_9… No such file"]),
        ({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}}, []),
        ({"type": "rate_limit_event", "rate_limit_info": {
            "status": "allowed_warning", "resetsAt": 1773000000, "rateLimitType": "seven_day"}},
         ["rate limit: allowed_warning seven_day, resets 2026-03-08 20:00 UTC"]),
        (result(), ["", "done · 1m 5s · 3 turns · $0.5000", "final: Finished."]),
        (result(duration_ms=4200, num_turns=1), ["", "done · 4.2s · 1 turns · $0.5000",
                                                 "final: Finished."]),
        (result(is_error=True, subtype="success", result="API Error: 500 boom",
                api_error_status=500),
         ["error: API Error: 500 boom (status 500)"]),
        ({"type": "stream_event", "event": {}}, []),
    ],
)
def test_rendering(event: dict[str, Any], rendered: list[str]) -> None:
    assert feed(event)[1] == rendered


def test_usage_is_rendered_once_per_message_and_summed() -> None:
    usage = {"input_tokens": 5, "output_tokens": 7, "cache_read_input_tokens": 100}
    parser, lines = feed(
        assistant({"type": "text", "text": "a"}, usage=usage),
        assistant({"type": "tool_use", "id": "t", "name": "Read", "input": {}}, usage=usage),
        assistant({"type": "text", "text": "b"}, ident="msg_2",
                  usage={"input_tokens": 1, "output_tokens": 1}),
    )
    assert lines.count("tokens: in 5 · out 7 · cache read 100") == 1
    assert "tokens: in 1 · out 1" in lines
    assert parser.signals.tokens == Tokens(input=6, output=8, cache_read=100)


def test_result_totals_replace_the_assistant_sums() -> None:
    parser, _ = feed(assistant({"type": "text", "text": "a"},
                               usage={"input_tokens": 1, "output_tokens": 1}), result())
    assert parser.signals.tokens == Tokens(input=10, output=20, cache_read=30)
    assert parser.signals.cost_usd == 0.5
    assert (parser.signals.turns_ended, parser.signals.last_turn_ok) == (1, True)


def test_conversation_and_assistant_signals() -> None:
    parser, _ = feed(INIT)
    assert parser.signals.conversation_id == "3f2a9c1e-aaaa-bbbb"
    assert parser.signals.model == "opus"
    assert not parser.signals.assistant_seen
    feed_more = parser.line(json.dumps(assistant({"type": "text", "text": "hi"})).encode())
    assert feed_more == ["assistant: hi"]
    assert parser.signals.assistant_seen


def test_tool_calls_and_assistant_text_are_counted() -> None:
    parser, _ = feed(INIT)
    assert (parser.signals.tool_calls, parser.signals.assistant_chars) == (0, 0)
    feed_more = [
        assistant({"type": "text", "text": "Reading the spec"}),
        assistant({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}},
                  {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {}}),
        {"type": "user", "message": {"content": [{"type": "tool_result",
                                                  "tool_use_id": "toolu_1", "content": "x"}]}},
        assistant({"type": "text", "text": "Done."}, {"type": "text", "text": "  "}),
        result(result="Done."),  # the final answer repeats the last text: not counted twice
    ]
    for event in feed_more:
        parser.line(json.dumps(event).encode())
    assert (parser.signals.tool_calls, parser.signals.assistant_chars) == (2, 21)


@pytest.mark.parametrize(
    ("events", "kind", "status"),
    [
        ([{"type": "rate_limit_event", "rate_limit_info": {
            "status": "rejected", "resetsAt": 1773000000, "rateLimitType": "five_hour"}}],
         ErrorKind.RATE_LIMIT, None),
        ([result(is_error=True, result="You've hit your limit · resets 2am (Europe/Berlin)",
                 api_error_status=429)], ErrorKind.RATE_LIMIT, 429),
        ([result(is_error=True, result="Claude AI usage limit reached|1773000000")],
         ErrorKind.RATE_LIMIT, None),
        ([result(is_error=True, result="Invalid API key · Please run /login",
                 api_error_status=401)], ErrorKind.FATAL, 401),
        ([result(is_error=True, result="Forbidden", api_error_status=403)],
         ErrorKind.FATAL, 403),
        ([result(is_error=True, result="Overloaded", api_error_status=529)],
         ErrorKind.PROVIDER, 529),
        ([result(is_error=True, result="API Error: Connection error.")],
         ErrorKind.PROVIDER, None),
        ([assistant({"type": "text", "text": "You've hit your limit · resets 2pm"},
                    error="rate_limit")], ErrorKind.RATE_LIMIT, None),
        ([b"Error: --dangerously-skip-permissions cannot be used with root/sudo privileges"],
         ErrorKind.FATAL, None),
        ([b"Error: Claude Code cannot be launched inside another Claude Code session."],
         ErrorKind.FATAL, None),
    ],
)
def test_classification(events: list[Any], kind: ErrorKind, status: int | None) -> None:
    parser, _ = feed(*events)
    assert parser.signals.error is not None
    assert (parser.signals.error.kind, parser.signals.error.status) == (kind, status)


def test_the_reset_hints_are_kept() -> None:
    parser, _ = feed({"type": "rate_limit_event", "rate_limit_info": {
        "status": "rejected", "resetsAt": 1773000000}},
        result(is_error=True, result="You've hit your limit · resets 2am"))
    info = parser.signals.rate_limit
    assert info.resets_at == 1773000000
    assert info.message.startswith("rate limit rejected")


def test_an_error_result_without_a_known_cause_is_not_classified() -> None:
    parser, lines = feed(result(is_error=True, subtype="error_max_budget_usd", result=""))
    assert parser.signals.error is None
    assert parser.signals.last_turn_ok is False
    assert lines == ["error: error_max_budget_usd (status None)"]


# The documented shape of a turn cut at --max-turns (claude's SDK `result` subtypes; not
# recordable against the mock, which cannot make claude count turns): with or without is_error.
@pytest.mark.parametrize("is_error", [True, False])
def test_max_turns_is_context_exhaustion(is_error: bool) -> None:
    parser, lines = feed(INIT, result(is_error=is_error, subtype="error_max_turns", result=""))
    assert parser.signals.error is not None
    assert parser.signals.error.kind is ErrorKind.CONTEXT
    assert parser.signals.last_turn_ok is False
    assert lines[-1] == "error: error_max_turns (status None)"


def test_prompt_too_long_is_context_exhaustion_in_the_result_and_the_synthetic_message() -> None:
    """claude 2.1.330's own words against the mock's 400 (tests/fixtures/realcli/claude)."""
    words = "Prompt is too long · the request is ~210000 tokens (limit 200000)"
    for event in (result(is_error=True, result=words),
                  assistant({"type": "text", "text": words}, error="invalid_request")):
        parser, _ = feed(INIT, event)
        assert parser.signals.error is not None
        assert parser.signals.error.kind is ErrorKind.CONTEXT


def test_agent_content_never_classifies() -> None:
    """AC-33: limit phrases in assistant text, tool input and tool output are just content."""
    phrases = ("hit your limit", "Provider returned error",
               "The model returned no assistant messages", '"error":"rate_limit"',
               "API Error: 500", "Invalid API key", "Prompt is too long",
               "maximum context length", "error_max_turns")
    text = " / ".join(phrases)
    parser, _ = feed(
        INIT,
        assistant({"type": "text", "text": text}),
        assistant({"type": "tool_use", "id": "t", "name": "Write",
                   "input": {"file_path": "limits.py", "content": text}}),
        {"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t", "content": text}]}},
        b"Error: hit your limit (printed by a tool, after JSON)",
        result(result=text),
    )
    assert parser.signals.error is None
    assert parser.signals.rate_limit.message == ""


def test_broken_lines_pass_through_and_never_raise() -> None:
    split = (b'{"type":"assistant","message":{"content":[{"type":"text","text":"par'
             b'{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}')
    parser, lines = feed(split, b'tial"}]}}', b"\xff\xfe", b"[1,2]", b'{"type": 5}',
                         b'{"type":"assistant","message":"nope"}',
                         b'{"type":"result","usage":"x","total_cost_usd":"y"}',
                         b'{"type":"user","message":{"content":"text"}}')
    assert feed(split)[1] == []
    assert lines == ["", "done · 0.0s · 0 turns · $0.0000"]  # the odd result event
    assert parser.signals.json_seen
    assert parser.signals.error is None
    assert not parser.signals.assistant_seen


def _limit_event(**info: Any) -> dict[str, Any]:
    return {"type": "rate_limit_event", "rate_limit_info": info, "uuid": "u", "session_id": "s"}


def test_quota_windows_come_from_the_limiting_window_and_the_unified_ones() -> None:
    """The documented shape: `utilization` (0..1) and `resetsAt` (Unix seconds) for the window
    `rateLimitType` names, and per window in `unifiedWindows` (CLI 2.1.263+)."""
    parser, _ = feed(_limit_event(
        status="allowed_warning", resetsAt=1773000000, rateLimitType="five_hour",
        utilization=0.85, unifiedWindows={
            "five_hour": {"resetsAt": 1773000000, "utilization": 0.86, "status": "allowed"},
            "seven_day": {"resetsAt": 1773500000, "utilization": 1, "surpassedThreshold": 1}}))
    quota = parser.signals.quota
    assert {n: (w.utilization, w.resets_at) for n, w in quota.items()} == {
        "five_hour": (0.86, 1773000000), "seven_day": (1.0, 1773500000)}
    assert parser.signals.error is None  # a warning is no error


def test_the_newest_reading_of_a_window_wins_and_milliseconds_are_read_as_such() -> None:
    parser, _ = feed(
        _limit_event(status="allowed", resetsAt=1773000000, rateLimitType="five_hour",
                     utilization=0.5),
        _limit_event(status="allowed", resetsAt=1773000000000, rateLimitType="five_hour",
                     utilization=0.7))
    window = parser.signals.quota["five_hour"]
    assert (window.utilization, window.resets_at) == (0.7, 1773000000)


@pytest.mark.parametrize("info", [
    {"status": "allowed", "resetsAt": 1773000000, "rateLimitType": "five_hour"},  # no use
    {"status": "allowed", "utilization": 0.5, "rateLimitType": "five_hour"},  # no reset
    {"status": "allowed", "utilization": 0.5, "resetsAt": 1773000000},  # no window
    {"status": "allowed", "utilization": "high", "resetsAt": 1773000000, "rateLimitType": "x"},
    {"status": "allowed", "unifiedWindows": ["five_hour"]},
    {"status": "allowed", "unifiedWindows": {"five_hour": {"utilization": True,
                                                           "resetsAt": 1773000000}}},
])
def test_a_window_without_its_use_or_its_reset_is_no_reading(info: dict[str, Any]) -> None:
    parser, _ = feed(_limit_event(**info))
    assert parser.signals.quota == {}


def test_non_finite_numbers_are_no_reading() -> None:
    parser, _ = feed(b'{"type":"rate_limit_event","rate_limit_info":{"status":"allowed",'
                     b'"rateLimitType":"five_hour","utilization":NaN,"resetsAt":Infinity}}')
    assert parser.signals.quota == {}


# Printed by claude 2.1.330 with a subscription login (docs/real-clis.md, "Quota windows").
MEASURED = (b'{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","resetsAt":'
            b'1795584540,"rateLimitType":"five_hour","overageStatus":"rejected",'
            b'"overageDisabledReason":"org_level_disabled","isUsingOverage":false,'
            b'"unifiedWindows":{"five_hour":{"utilization":0.91,"resetsAt":1795584540,'
            b'"status":"allowed_warning"},"seven_day":{"utilization":0.42,"resetsAt":1795840140,'
            b'"status":"allowed"}}},"uuid":"u","session_id":"s"}')


def test_the_measured_event_gives_both_windows() -> None:
    parser, lines = feed(MEASURED)
    assert lines == []  # `allowed`: nothing to show
    assert {n: (w.utilization, w.resets_at) for n, w in parser.signals.quota.items()} == {
        "five_hour": (0.91, 1795584540), "seven_day": (0.42, 1795840140)}


# -- numbers the CLI prints are untrusted (issue 27) ---------------------------------------------
@pytest.mark.parametrize("forged", [float("nan"), float("inf"), -50.0, 1e300, 10**400, True])
def test_an_impossible_cost_is_unknown_and_noted(forged: Any) -> None:
    raw = json.dumps(result(total_cost_usd=0)).replace('"total_cost_usd": 0',
                                                       f'"total_cost_usd": {json.dumps(forged)}')
    parser, lines = feed(result(total_cost_usd=2.0), raw)
    signals = parser.signals
    assert signals.cost_usd is None  # not 2.0 (the total so far), not NaN: estimated later
    assert list(signals.refused) == ["cost_usd"]
    assert signals.turns_ended == 2  # the line still counts: only its number is refused
    assert lines[-2] == "done · 1m 5s · 3 turns · $0.0000"


def test_impossible_token_counts_read_as_none_and_the_line_is_kept() -> None:
    usage = {"input_tokens": float("nan"), "output_tokens": -4, "cache_read_input_tokens": 1e30,
             "cache_creation_input_tokens": 7}
    parser, _ = feed(result(usage=usage, duration_ms=float("inf"), num_turns=float("nan")))
    assert parser.signals.tokens == Tokens(cache_write=7)
    assert parser.signals.turns_ended == 1
    assert set(parser.signals.refused) == {"input_tokens", "output_tokens",
                                           "cache_read_input_tokens"}


@pytest.mark.parametrize("forged", [1e20, float("nan"), -1, "soon", 10**400])
def test_an_impossible_reset_is_no_reset_and_never_raises(forged: Any) -> None:
    info = {"status": "rejected", "rateLimitType": "five_hour", "resetsAt": forged,
            "utilization": 1.0}
    parser, lines = feed(_limit_event(**info))
    assert parser.signals.error is not None
    assert parser.signals.error.kind is ErrorKind.RATE_LIMIT
    assert parser.signals.rate_limit.resets_at is None
    assert parser.signals.quota == {}  # a window without a time is no reading
    assert lines == ["rate limit: rejected five_hour, resets unknown"]
    assert "resetsAt" in parser.signals.refused


def test_a_reset_in_milliseconds_is_read_as_seconds_for_the_sleep_too() -> None:
    parser, _ = feed(_limit_event(status="rejected", resetsAt=1_773_000_000_000))
    assert parser.signals.rate_limit.resets_at == 1_773_000_000
    assert parser.signals.refused == {}


def test_an_impossible_utilization_is_no_reading() -> None:
    parser, _ = feed(_limit_event(status="allowed_warning", rateLimitType="five_hour",
                                  resetsAt=1_773_000_000, utilization=float("nan")))
    assert parser.signals.quota == {}
    assert list(parser.signals.refused) == ["utilization"]
