"""Small text helpers shared by the parsers: JSON decoding that never raises, summaries,
and the rendered `tokens:` line (ADP-35..38)."""

from __future__ import annotations

import json
import re
from typing import Any

from aidd.agents.base import Tokens
from aidd.numbers import count

_ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_SUMMARY_KEYS = ("file_path", "filePath", "path", "command", "pattern", "url", "query")


def decode_event(raw: bytes) -> dict[str, Any] | None:
    """A JSON object line, or None for anything else (banners, split events, garbage)."""
    stripped = raw.strip()
    if not stripped.startswith(b"{"):
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):  # a line nested deep enough to exhaust the stack
        return None
    return value if isinstance(value, dict) else None


def plain_text(raw: bytes) -> str:
    """A non-JSON line as text: colour codes stripped, invalid UTF-8 replaced."""
    return _ANSI.sub(b"", raw).decode("utf-8", "replace").strip()


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_int(value: Any) -> int:
    """A count shown or classified (turns, a duration, a status), 0 when it is none."""
    return count(value) or 0


def as_status(value: Any) -> int | None:
    """An HTTP status that may arrive as a number or a numeric string."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return as_int(value) or None


def cut(text: str, limit: int) -> str:
    """`text` up to `limit` characters, then `… (<n> chars)`."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} chars)"


def one_line(text: str) -> str:
    return " ".join(text.split())


def text_lines(label: str, text: str) -> list[str]:
    """`label: first line` then the rest indented: every rendered line stays one line."""
    lines = [line.rstrip() for line in text.strip("\n").splitlines()] or [""]
    return [f"{label}: {lines[0]}"] + [f"  {line}" for line in lines[1:]]


def summarize_input(tool_input: Any) -> str:
    """The path, command or pattern of a tool's input, else compact JSON cut at 2,000 chars."""
    data = as_dict(tool_input)
    for key in _SUMMARY_KEYS:
        value = data.get(key)
        if isinstance(value, str) and value:
            return cut(one_line(value), 2000)
    if not data:
        return ""
    return cut(json.dumps(data, ensure_ascii=False, separators=(",", ":")), 2000)


def tokens_line(tokens: Tokens) -> str | None:
    """`tokens: in I · out O[ · reasoning R][ · cache read C][ · cache write W]` when non-zero."""
    if not tokens.any():
        return None
    parts = [f"in {tokens.input}", f"out {tokens.output}"]
    extras = (
        ("reasoning", tokens.reasoning),
        ("cache read", tokens.cache_read),
        ("cache write", tokens.cache_write),
    )
    parts += [f"{label} {value}" for label, value in extras if value]
    return "tokens: " + " · ".join(parts)


def format_ms(duration_ms: Any) -> str:
    seconds = as_int(duration_ms) / 1000
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m {secs}s" if minutes < 60 else f"{minutes // 60}h {minutes % 60}m {secs}s"
