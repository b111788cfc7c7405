"""OpenAI chat-completions shapes: SSE chunks, a non-streaming completion, error answers."""

from __future__ import annotations

import json
import time
from typing import Any

from .scenario import Reply, ReplyKind
from .tools import tool_call

_ERRORS: dict[ReplyKind, tuple[int, str, str, str]] = {
    ReplyKind.RATE_LIMIT: (
        429,
        "rate_limit_exceeded",
        "rate_limit_exceeded",
        "Rate limit reached for requests. Please try again in 1s.",
    ),
    ReplyKind.OVERLOADED: (529, "overloaded_error", "overloaded", "The server is overloaded."),
    ReplyKind.SERVER_ERROR: (
        500,
        "server_error",
        "internal_error",
        "The server had an error while processing your request.",
    ),
    ReplyKind.AUTH_ERROR: (
        401,
        "invalid_request_error",
        "invalid_api_key",
        "Incorrect API key provided.",
    ),
    # OpenAI's own words for a request past the model's context window
    ReplyKind.CONTEXT_OVERFLOW: (
        400,
        "invalid_request_error",
        "context_length_exceeded",
        "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 210000 tokens. Please reduce the length of the messages.",
    ),
}


def _chunk(
    cid: str, body: dict[str, Any], delta: dict[str, Any], finish: str | None = None
) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", "mock-model"),
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def data(obj: dict[str, Any] | str) -> bytes:
    return f"data: {obj if isinstance(obj, str) else json.dumps(obj)}\n\n".encode()


def _usage(body: dict[str, Any]) -> dict[str, int]:
    prompt = max(1, len(json.dumps(body.get("messages", []))) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": 12, "total_tokens": prompt + 12}


def stream_frames(reply: Reply, body: dict[str, Any], cid: str) -> list[bytes]:
    frames = [data(_chunk(cid, body, {"role": "assistant", "content": ""}))]
    if reply.kind in (ReplyKind.WRITE_FILE, ReplyKind.SHELL):
        name, args = tool_call(reply, body)
        call = {
            "index": 0,
            "id": f"call_{cid[9:]}",
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        frames.append(data(_chunk(cid, body, {"tool_calls": [call]})))
        raw = json.dumps(args)
        for part in (raw[: len(raw) // 2], raw[len(raw) // 2 :]):
            frames.append(
                data(
                    _chunk(
                        cid, body, {"tool_calls": [{"index": 0, "function": {"arguments": part}}]}
                    )
                )
            )
        finish = "tool_calls"
    else:
        for word in reply.text.split(" "):
            frames.append(data(_chunk(cid, body, {"content": word + " "})))
        finish = "stop"
    frames.append(data(_chunk(cid, body, {}, finish)))
    frames.append(data({**_chunk(cid, body, {}), "choices": [], "usage": _usage(body)}))
    frames.append(data("[DONE]"))
    return frames


def stall_frames(reply: Reply, body: dict[str, Any], cid: str) -> list[bytes]:
    return stream_frames(Reply.final(reply.text), body, cid)[:2]


def completion_json(reply: Reply, body: dict[str, Any], cid: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    finish = "stop"
    if reply.kind in (ReplyKind.WRITE_FILE, ReplyKind.SHELL):
        name, args = tool_call(reply, body)
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{cid[9:]}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
            ],
        }
        finish = "tool_calls"
    return {
        "id": cid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "mock-model"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _usage(body),
    }


def error_answer(reply: Reply) -> tuple[int, dict[str, str], bytes]:
    status, etype, code, message = _ERRORS[reply.kind]
    headers = {"content-type": "application/json"}
    if reply.kind is ReplyKind.RATE_LIMIT:
        headers |= {
            "retry-after": str(reply.retry_after_s),
            "retry-after-ms": str(reply.retry_after_s * 1000),
            "x-ratelimit-limit-requests": "60",
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": f"{reply.retry_after_s}s",
        }
        message = f"Rate limit reached for requests. Please try again in {reply.retry_after_s}s."
    body = {"error": {"message": message, "type": etype, "param": None, "code": code}}
    return status, headers, json.dumps(body).encode()


def models_json(model_ids: list[str]) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": m, "object": "model", "created": 0, "owned_by": "mock"} for m in model_ids],
    }
