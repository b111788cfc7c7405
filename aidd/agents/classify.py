"""Which error a structured signal announces (ADP-40..42). Applied only to fields of the CLI's
own events and error lines, never to assistant text or tool output."""

from __future__ import annotations

import re

from aidd.agents.base import ErrorKind

RATE_LIMIT_TEXT = re.compile(
    r"rate.?limit|usage.?limit|hit your limit|too many requests|quota|limit reached", re.I
)
AUTH_TEXT = re.compile(
    r"\bauth|unauthori[sz]ed|forbidden|api.?key|credential|not logged in|/login\b|log ?in again",
    re.I,
)
# The conversation ran out of context or turns (issue 32): Anthropic's "prompt is too long",
# OpenAI's "maximum context length" / `context_length_exceeded`, opencode's and kilo's
# context-overflow error names, claude's max-turns end. Checked before the rate-limit words,
# since "context limit reached" is no rate limit.
CONTEXT_TEXT = re.compile(
    r"prompt is too long|input is too long|context.?length|context.?window|context.?overflow"
    r"|maximum context|context limit|too many (?:input )?tokens|max(?:imum)?.?turns", re.I
)
NO_OUTPUT_TEXT = re.compile(r"no assistant message|no output", re.I)
# kilo 7.7 `run` without --auto: "run ended with an auto-rejected permission; pass --auto ..."
PERMISSION_TEXT = re.compile(r"auto-rejected permission|permission.{0,40}auto-reject", re.I)


def provider_error_kind(status: int | None, text: str) -> ErrorKind:
    """opencode/kilo `error` events and `Error:` lines (ADP-42)."""
    if status != 429 and CONTEXT_TEXT.search(text):
        return ErrorKind.CONTEXT
    if status == 429 or RATE_LIMIT_TEXT.search(text):
        return ErrorKind.RATE_LIMIT
    if status in (401, 403) or AUTH_TEXT.search(text) or PERMISSION_TEXT.search(text):
        return ErrorKind.FATAL  # nothing changes without a human: stop instead of looping
    if NO_OUTPUT_TEXT.search(text):
        return ErrorKind.NO_ASSISTANT
    return ErrorKind.PROVIDER


def claude_result_error_kind(status: int | None, text: str) -> ErrorKind | None:
    """A claude `result` with `is_error` (ADP-41); None when it names no known cause."""
    if status != 429 and CONTEXT_TEXT.search(text):
        return ErrorKind.CONTEXT
    if status == 429 or RATE_LIMIT_TEXT.search(text):
        return ErrorKind.RATE_LIMIT
    if status in (401, 403) or AUTH_TEXT.search(text):
        return ErrorKind.FATAL
    if (status is not None and status >= 500) or text.lstrip().startswith("API Error"):
        return ErrorKind.PROVIDER
    return None
