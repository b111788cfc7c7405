"""Read what a CLI run produced: event types per line with arrival times, ids, request summaries."""

from __future__ import annotations

import json
import re
from typing import Any

from .drive import Capture
from .mock_server import MockServer
from .prompts import NUDGE
from .recording import sha256_text

_SESSION = re.compile(rb'"(?:session_id|sessionID)"\s*:\s*"([^"]+)"')


def session_id(stdout: bytes) -> str | None:
    """claude: `session_id` of system/init; opencode/kilo: `sessionID` of any event."""
    match = _SESSION.search(stdout)
    return match.group(1).decode() if match else None


def first_id(raw: bytes) -> str | None:
    """The first `"id": "ses_..."` in a JSON listing (opencode/kilo `session list`)."""
    match = re.search(rb'"id"\s*:\s*"(ses_[^"]+)"', raw)
    return match.group(1).decode() if match else None


def event_label(line: bytes) -> str:
    """`type[/subtype]` of a JSON line, else `non-json`."""
    try:
        obj = json.loads(line)
    except ValueError:
        return "non-json" if line.strip() else "blank"
    if not isinstance(obj, dict):
        return "json-non-object"
    label = str(obj.get("type"))
    sub = obj.get("subtype") or (obj.get("part") or {}).get("reason")
    return f"{label}/{sub}" if sub else label


def timeline(capture: Capture, stream: str) -> list[dict[str, Any]]:
    """One entry per complete line: when its newline arrived and what kind of line it is."""
    out: list[dict[str, Any]] = []
    pending = b""
    for chunk in capture.chunks:
        if chunk.stream != stream:
            continue
        pending += chunk.data
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            out.append({"at_s": chunk.at_s, "kind": event_label(line), "bytes": len(line) + 1})
    if pending:
        out.append({"at_s": capture.chunks[-1].at_s, "kind": "partial", "bytes": len(pending)})
    return out


def request_summary(mock: MockServer, prompt: str) -> list[dict[str, Any]]:
    want = sha256_text(prompt)
    return [
        {
            "at_s": r.at_s,
            "method": r.method,
            "path": r.path,
            "primary": r.primary,
            "reply": r.reply,
            "body_bytes": r.body_bytes,
            "model": r.body.get("model") if isinstance(r.body, dict) else None,
            "messages": len(r.body.get("messages", [])) if isinstance(r.body, dict) else None,
            "prompt_exact": want in r.user_text_sha256s(),
            "prompt_contained": any(prompt.strip() in t for t in r.user_texts()),
            "nudge": r.carries_text(NUDGE),
        }
        for r in mock.requests
    ]


def retry_hints(stdout: bytes) -> list[dict[str, Any]]:
    """The structured error/retry/rate-limit events, kept whole for the docs."""
    keep = ("system/api_retry", "rate_limit_event", "result/error_during_execution", "error")
    out = []
    for line in stdout.splitlines():
        label = event_label(line)
        if label.startswith(keep) or (label.startswith("result") and b'"is_error":true' in line):
            out.append(json.loads(line))
    return out
