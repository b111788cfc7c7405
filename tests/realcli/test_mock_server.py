"""The mock model server on its own: protocol shapes, scripted failures, recording, shutdown."""

from __future__ import annotations

import http.client
import json
import threading
import time
from typing import Any

import pytest

from .conftest import StartMock
from .mock_server import GARBAGE, MockServer
from .recording import sha256_text
from .scenario import Reply, ReplyKind, Scenario

ANTHROPIC_TOOLS = [
    {"name": "Write", "input_schema": {"properties": {"file_path": {}, "content": {}}}},
    {"name": "Bash", "input_schema": {"properties": {"command": {}}}},
]
OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write",
            "parameters": {"properties": {"filePath": {}, "content": {}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "bash",
            "parameters": {"properties": {"command": {}, "description": {}}},
        },
    },
]


def post(
    mock: MockServer, path: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", mock.port, timeout=10)
    try:
        conn.request(
            "POST", path, json.dumps(body), {"content-type": "application/json", **(headers or {})}
        )
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def sse_data(raw: bytes) -> list[Any]:
    out = []
    for line in raw.decode().splitlines():
        if line.startswith("data: "):
            payload = line[6:]
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


def anthropic_body(**extra: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "stream": True,
        "tools": ANTHROPIC_TOOLS,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        **extra,
    }


def openai_body(**extra: Any) -> dict[str, Any]:
    return {
        "model": "mock-model",
        "stream": True,
        "tools": OPENAI_TOOLS,
        "messages": [{"role": "user", "content": "hi"}],
        **extra,
    }


def test_anthropic_text_stream_has_the_full_event_sequence(start_mock: StartMock) -> None:
    mock = start_mock(Scenario([Reply.final("hello there")]))
    status, headers, raw = post(mock, "/v1/messages?beta=true", anthropic_body())
    events = sse_data(raw)
    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    assert [e["type"] for e in events] == [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert (
        "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta")
        == "hello there"
    )
    assert events[-2]["delta"]["stop_reason"] == "end_turn"
    assert events[-2]["usage"]["output_tokens"] > 0


def test_anthropic_tool_call_uses_the_offered_tool_and_its_keys(start_mock: StartMock) -> None:
    mock = start_mock(Scenario([Reply.write_file("/p/a.txt", "x"), Reply.final("done")]))
    events = sse_data(post(mock, "/v1/messages", anthropic_body())[2])
    block = events[1]["content_block"]
    args = json.loads(
        "".join(e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta")
    )
    assert (block["type"], block["name"]) == ("tool_use", "Write")
    assert args == {"file_path": "/p/a.txt", "content": "x"}
    assert events[-2]["delta"]["stop_reason"] == "tool_use"
    follow_up = sse_data(post(mock, "/v1/messages", anthropic_body())[2])
    assert follow_up[1]["content_block"]["type"] == "text"


def test_anthropic_non_streaming_answers_a_whole_message(start_mock: StartMock) -> None:
    mock = start_mock(Scenario([Reply.shell("ls")]))
    status, _, raw = post(mock, "/v1/messages", anthropic_body(stream=False))
    message = json.loads(raw)
    assert status == 200
    assert message["content"][0]["input"] == {"command": "ls"}
    assert message["stop_reason"] == "tool_use"


def test_openai_stream_text_then_usage_then_done(start_mock: StartMock) -> None:
    mock = start_mock(Scenario([Reply.final("a b")]))
    chunks = sse_data(post(mock, "/v1/chat/completions", openai_body())[2])
    assert chunks[-1] == "[DONE]"
    assert chunks[-2]["usage"]["completion_tokens"] > 0
    assert chunks[-3]["choices"][0]["finish_reason"] == "stop"
    assert (
        "".join(
            c["choices"][0]["delta"].get("content", "") for c in chunks[:-2] if c["choices"]
        ).strip()
        == "a b"
    )


def test_openai_stream_tool_call_matches_opencode_tool_names(start_mock: StartMock) -> None:
    mock = start_mock(Scenario([Reply.shell("echo hi")]))
    chunks = sse_data(post(mock, "/v1/chat/completions", openai_body())[2])
    calls = [
        c["choices"][0]["delta"]["tool_calls"][0]
        for c in chunks[:-2]
        if c["choices"] and "tool_calls" in c["choices"][0]["delta"]
    ]
    assert calls[0]["function"]["name"] == "bash"
    args = json.loads("".join(c["function"]["arguments"] for c in calls))
    assert args["command"] == "echo hi"
    assert "description" in args
    assert chunks[-3]["choices"][0]["finish_reason"] == "tool_calls"


def test_openai_models_and_non_streaming_completion(start_mock: StartMock) -> None:
    mock = start_mock(Scenario([Reply.final("plain")]))
    conn = http.client.HTTPConnection("127.0.0.1", mock.port, timeout=5)
    conn.request("GET", "/v1/models")
    models = json.loads(conn.getresponse().read())
    conn.close()
    completion = json.loads(post(mock, "/v1/chat/completions", openai_body(stream=False))[2])
    assert [m["id"] for m in models["data"]] == ["mock-model"]
    assert completion["choices"][0]["message"]["content"] == "plain"


@pytest.mark.parametrize(
    ("kind", "status", "etype"),
    [
        (ReplyKind.RATE_LIMIT, 429, "rate_limit_error"),
        (ReplyKind.OVERLOADED, 529, "overloaded_error"),
        (ReplyKind.SERVER_ERROR, 500, "api_error"),
        (ReplyKind.AUTH_ERROR, 401, "authentication_error"),
    ],
)
def test_anthropic_errors(start_mock: StartMock, kind: ReplyKind, status: int, etype: str) -> None:
    mock = start_mock(Scenario([Reply.of(kind, retry_after_s=7)]))
    got, headers, raw = post(mock, "/v1/messages", anthropic_body())
    assert got == status
    assert json.loads(raw)["error"]["type"] == etype
    if kind is ReplyKind.RATE_LIMIT:
        assert headers["retry-after"] == "7"
        assert headers["anthropic-ratelimit-requests-reset"].endswith("Z")


def test_openai_rate_limit_carries_retry_after_and_ms(start_mock: StartMock) -> None:
    mock = start_mock(Scenario([Reply.of(ReplyKind.RATE_LIMIT, retry_after_s=3)]))
    status, headers, raw = post(mock, "/v1/chat/completions", openai_body())
    assert status == 429
    assert (headers["retry-after"], headers["retry-after-ms"]) == ("3", "3000")
    assert json.loads(raw)["error"]["code"] == "rate_limit_exceeded"


def test_garbage_is_not_an_event_stream(start_mock: StartMock) -> None:
    mock = start_mock(Scenario([Reply.of(ReplyKind.GARBAGE)]))
    status, _, raw = post(mock, "/v1/chat/completions", openai_body())
    assert status == 200
    assert raw == GARBAGE
    with pytest.raises(UnicodeDecodeError):
        raw.decode()


def _read_in_thread(mock: MockServer, body: dict[str, Any]) -> tuple[threading.Thread, list[bytes]]:
    got: list[bytes] = []

    def _read() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", mock.port, timeout=30)
        conn.request("POST", "/v1/chat/completions", json.dumps(body))
        resp = conn.getresponse()
        got.append(b"status %d" % resp.status)
        try:
            while chunk := resp.read1(65536):
                got.append(chunk)
        except (http.client.IncompleteRead, OSError):
            got.append(b"<cut>")
        conn.close()

    reader = threading.Thread(target=_read, daemon=True)
    reader.start()
    return reader, got


@pytest.mark.parametrize("kind", [ReplyKind.HANG, ReplyKind.STALL])
def test_hang_and_stall_hold_the_stream_until_stop(kind: ReplyKind) -> None:
    mock = MockServer(Scenario([Reply.of(kind)])).start()
    reader, got = _read_in_thread(mock, openai_body())
    assert mock.log.wait_for(1, 5)
    time.sleep(0.3)
    assert reader.is_alive()
    assert got[0] == b"status 200"
    assert (len(got) > 1) == (kind is ReplyKind.STALL)  # a stall sends its first frames
    started = time.monotonic()
    mock.stop()
    reader.join(5)
    assert not reader.is_alive()
    assert time.monotonic() - started < 2
    assert got[-1] == b"<cut>"


def test_side_requests_do_not_consume_the_script_and_last_reply_repeats(
    start_mock: StartMock,
) -> None:
    mock = start_mock(Scenario([Reply.of(ReplyKind.SERVER_ERROR), Reply.final("x")]))
    side = post(mock, "/v1/chat/completions", {**openai_body(), "tools": []})
    first, second, third = (post(mock, "/v1/chat/completions", openai_body())[0] for _ in range(3))
    assert side[0] == 200
    assert (first, second, third) == (500, 200, 200)
    assert [r.reply for r in mock.requests] == ["text", "server_error", "text", "text"]
    assert [r.primary for r in mock.requests] == [False, True, True, True]


def test_records_body_and_strips_credentials(start_mock: StartMock) -> None:
    mock = start_mock(Scenario([Reply.final()]))
    prompt = "é" * 70_000 + "\x1b[31m\n"
    body = anthropic_body(
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "<system-reminder>x</system-reminder>"},
                    {"type": "text", "text": prompt},
                ],
            }
        ]
    )
    post(mock, "/v1/messages", body, {"x-api-key": "secret-1", "authorization": "Bearer s2"})
    record = mock.requests[0]
    assert "secret" not in json.dumps(record.headers)
    assert "s2" not in json.dumps(record.headers)
    assert record.had_credentials
    assert sha256_text(prompt) in record.user_text_sha256s()
    assert record.body_bytes == len(json.dumps(body).encode())


def test_count_tokens_and_unknown_routes_are_answered_and_recorded(start_mock: StartMock) -> None:
    mock = start_mock(Scenario([Reply.final()]))
    counted = post(mock, "/v1/messages/count_tokens", anthropic_body())
    missing = post(mock, "/v2/whatever", {})
    assert counted[0] == 200
    assert json.loads(counted[2])["input_tokens"] > 0
    assert missing[0] == 404
    assert [r.reply for r in mock.requests] == ["count_tokens", "not found"]
    assert mock.scenario.taken == 0


def test_after_tool_answers_a_tool_result_without_consuming_the_script(
    start_mock: StartMock,
) -> None:
    """Several agents at once (`--parallel`): a tool result gets `after_tool`, a new turn the
    script's next reply, in whatever order the agents ask."""
    mock = start_mock(Scenario([Reply.shell("ls")], after_tool=Reply.final("Done.")))
    fresh = {"role": "user", "content": "go"}
    anthropic_result = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}
    openai_result = {"role": "tool", "tool_call_id": "t1", "content": "ok"}
    post(mock, "/v1/messages", {"model": "m", "tools": ANTHROPIC_TOOLS, "messages": [fresh]})
    post(mock, "/v1/messages", {"model": "m", "tools": ANTHROPIC_TOOLS,
                                "messages": [fresh, anthropic_result]})
    post(mock, "/v1/chat/completions", {"model": "m", "tools": OPENAI_TOOLS,
                                        "messages": [fresh, openai_result]})
    post(mock, "/v1/chat/completions", {"model": "m", "tools": OPENAI_TOOLS, "messages": [fresh]})
    assert [r.reply for r in mock.primary_requests()] == ["shell", "text", "text", "shell"]
    assert mock.scenario.taken == 2
