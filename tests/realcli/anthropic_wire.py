"""Anthropic Messages API shapes: SSE event frames, a non-streaming message, error answers."""

from __future__ import annotations

import json
import time
from typing import Any

from .scenario import Reply, ReplyKind
from .tools import tool_call

_ERRORS: dict[ReplyKind, tuple[int, str, str]] = {
    ReplyKind.RATE_LIMIT: (
        429,
        "rate_limit_error",
        "This request would exceed the rate limit for your organization. Please try again later.",
    ),
    ReplyKind.OVERLOADED: (529, "overloaded_error", "Overloaded"),
    ReplyKind.SERVER_ERROR: (500, "api_error", "Internal server error"),
    ReplyKind.AUTH_ERROR: (401, "authentication_error", "invalid x-api-key"),
    # Anthropic's own words for a request past the model's context window
    ReplyKind.CONTEXT_OVERFLOW: (
        400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
}


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _usage(body: dict[str, Any]) -> dict[str, int]:
    return {
        "input_tokens": max(1, len(json.dumps(body.get("messages", []))) // 4),
        "output_tokens": 12,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _message(
    msg_id: str, body: dict[str, Any], content: list[dict[str, Any]], stop_reason: str | None
) -> dict[str, Any]:
    return {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "mock-model"),
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": _usage(body),
    }


def _block(reply: Reply, body: dict[str, Any], msg_id: str) -> dict[str, Any]:
    if reply.kind in (ReplyKind.WRITE_FILE, ReplyKind.SHELL):
        name, args = tool_call(reply, body)
        return {"type": "tool_use", "id": f"toolu_{msg_id[4:]}", "name": name, "input": args}
    return {"type": "text", "text": reply.text}


def message_json(reply: Reply, body: dict[str, Any], msg_id: str) -> dict[str, Any]:
    block = _block(reply, body, msg_id)
    stop = "tool_use" if block["type"] == "tool_use" else "end_turn"
    return _message(msg_id, body, [block], stop)


def stream_frames(reply: Reply, body: dict[str, Any], msg_id: str) -> list[bytes]:
    """The whole SSE stream of a text or tool-call reply."""
    block = _block(reply, body, msg_id)
    frames = [
        sse("message_start", {"type": "message_start", "message": _message(msg_id, body, [], None)})
    ]
    if block["type"] == "tool_use":
        frames.append(
            sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {**block, "input": {}},
                },
            )
        )
        raw = json.dumps(block["input"])
        for part in (raw[: len(raw) // 2], raw[len(raw) // 2 :]):
            frames.append(
                sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "input_json_delta", "partial_json": part},
                    },
                )
            )
        stop = "tool_use"
    else:
        frames.append(
            sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            )
        )
        frames.append(sse("ping", {"type": "ping"}))
        for word in _pieces(reply.text):
            frames.append(
                sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": word},
                    },
                )
            )
        stop = "end_turn"
    frames.append(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
    frames.append(
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 12},
            },
        )
    )
    frames.append(sse("message_stop", {"type": "message_stop"}))
    return frames


def stall_frames(reply: Reply, body: dict[str, Any], msg_id: str) -> list[bytes]:
    """The start of a text stream: message_start, the block start and one delta."""
    return stream_frames(Reply.final(reply.text), body, msg_id)[:4]


def _pieces(text: str) -> list[str]:
    words = text.split(" ")
    return [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]


def error_answer(reply: Reply) -> tuple[int, dict[str, str], bytes]:
    status, etype, message = _ERRORS[reply.kind]
    headers = {"content-type": "application/json"}
    if reply.kind is ReplyKind.RATE_LIMIT:
        reset = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + reply.retry_after_s))
        headers |= {
            "retry-after": str(reply.retry_after_s),
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-requests-reset": reset,
            "anthropic-ratelimit-tokens-reset": reset,
        }
    body = {"type": "error", "error": {"type": etype, "message": message}, "request_id": "req_mock"}
    return status, headers, json.dumps(body).encode()


def subscription_quota_headers(five_hour: float, five_hour_reset: int, seven_day: float,
                               seven_day_reset: int) -> dict[str, str]:
    """The unified rate-limit headers a subscription's responses carry; claude (with an OAuth
    login, not an API key) turns them into a stream-json `rate_limit_event` whose
    `unifiedWindows` hold each window's utilization and reset."""
    return {
        "anthropic-ratelimit-unified-status": "allowed",
        "anthropic-ratelimit-unified-reset": str(five_hour_reset),
        "anthropic-ratelimit-unified-representative-claim": "five_hour",
        "anthropic-ratelimit-unified-5h-status": "allowed_warning",
        "anthropic-ratelimit-unified-5h-reset": str(five_hour_reset),
        "anthropic-ratelimit-unified-5h-utilization": str(five_hour),
        "anthropic-ratelimit-unified-7d-status": "allowed",
        "anthropic-ratelimit-unified-7d-reset": str(seven_day_reset),
        "anthropic-ratelimit-unified-7d-utilization": str(seven_day),
    }
