"""claude-code: `claude --print` with stream-json both ways; the prompt and every nudge are
user messages on stdin, a nudge preceded by an interrupt request (ADP-10, ADP-22, ADP-30,
ADP-36, ADP-41)."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Mapping
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from aidd.agents.base import (
    COST_FIELD,
    AgentContext,
    ErrorKind,
    ErrorSignal,
    NudgeMethod,
    Signals,
    Tokens,
    agent_environment,
)
from aidd.agents.classify import AUTH_TEXT, CONTEXT_TEXT, claude_result_error_kind
from aidd.agents.jsonlines import (
    as_dict,
    as_int,
    as_status,
    cut,
    decode_event,
    format_ms,
    one_line,
    plain_text,
    summarize_input,
    text_lines,
    tokens_line,
)
from aidd.agents.ratelimit import QuotaWindow, RateLimitInfo
from aidd.numbers import count, epoch_s, fraction, money

# Printed instead of JSON when claude refuses to start: as root with
# --dangerously-skip-permissions (without IS_SANDBOX=1), or nested inside another claude.
_REFUSAL = re.compile(
    r"dangerously-skip-permissions|inside another|nested (?:claude|session)|with root|sudo", re.I
)
# The top-level `error` of a synthetic assistant message (e.g. "You've hit your limit").
_ASSISTANT_ERRORS = {
    "rate_limit": ErrorKind.RATE_LIMIT,
    "authentication_failed": ErrorKind.FATAL,
    "billing_error": ErrorKind.FATAL,
    "server_error": ErrorKind.PROVIDER,
}
INTERRUPTED = "[Request interrupted by user]"
_MAX_TURNS = "error_max_turns"  # the `result` subtype of a conversation out of turns
_NUDGE_IDS = itertools.count(1)
_OPEN_TOOLS_MAX = 1000  # tool calls remembered as running; the output is untrusted


class StreamJsonParser:
    """Events of `--output-format stream-json --verbose`."""

    def __init__(self, zone: tzinfo) -> None:
        self._signals = Signals()
        self._zone = zone
        self._usage: dict[str, Tokens] = {}  # per assistant message id (ADP-38)
        self._final_usage = False

    @property
    def signals(self) -> Signals:
        return self._signals

    def wants(self, data: bytes) -> bool:
        return b"{" in data or not self._signals.json_seen

    def line(self, raw: bytes) -> list[str]:
        try:
            return self._line(raw)
        except Exception:  # a parser never raises (ADP-35); the raw line is already logged
            return []

    def _line(self, raw: bytes) -> list[str]:
        event = decode_event(raw)
        if event is None or not _interrupt_echo(event):
            self._signals.progress += 1
        if event is None:
            self._plain(raw)
            return []
        self._signals.json_seen = True
        handler = _HANDLERS.get(str(event.get("type")))
        return handler(self, event) if handler else []

    def _plain(self, raw: bytes) -> None:
        """A refusal printed before any JSON: the CLI cannot work without a human (ADP-41)."""
        if self._signals.json_seen:
            return
        text = plain_text(raw)
        if _REFUSAL.search(text) or AUTH_TEXT.search(text):
            self._signals.note_error(ErrorSignal(ErrorKind.FATAL, text))

    def _system(self, event: dict[str, Any]) -> list[str]:
        subtype = event.get("subtype")
        if subtype == "init":
            session = str(event.get("session_id") or "")
            self._signals.conversation_id = session or None
            self._signals.model = str(event.get("model") or "") or None
            return [f"start · model {self._signals.model} · conversation {session[:8]}…"]
        if subtype == "api_retry":
            return [
                f"api retry {event.get('attempt')}/{event.get('max_retries')} in "
                f"{event.get('retry_delay_ms')} ms (status {event.get('error_status')}, "
                f"{event.get('error')})"
            ]
        return []

    def _assistant(self, event: dict[str, Any]) -> list[str]:
        message = as_dict(event.get("message"))
        blocks = [as_dict(b) for b in message.get("content") or [] if isinstance(b, dict)]
        error = event.get("error")
        if isinstance(error, str) and error:
            return self._assistant_error(error, blocks, as_status(event.get("api_error_status")))
        lines: list[str] = []
        for block in blocks:
            lines += self._block(block)
        return lines + self._usage_line(message)

    def _assistant_error(
        self, error: str, blocks: list[dict[str, Any]], status: int | None
    ) -> list[str]:
        """A synthetic assistant message carrying the CLI's own error (not the model's text)."""
        text = " ".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")
        kind = _ASSISTANT_ERRORS.get(error)
        if kind is None and CONTEXT_TEXT.search(text):  # "Prompt is too long" (issue 32)
            kind = ErrorKind.CONTEXT
        if kind is not None:
            self._signals.note_error(ErrorSignal(kind, text or error, status))
        if kind is ErrorKind.RATE_LIMIT:
            self._signals.note_rate_limit(RateLimitInfo(message=text))
        return [one_line(f"error: {text or error} ({error})")]

    def _block(self, block: dict[str, Any]) -> list[str]:
        if block.get("type") == "text":
            text = str(block.get("text") or "")
            if not text.strip():
                return []
            self._signals.assistant_seen = True
            self._signals.assistant_chars += len(text)
            return text_lines("assistant", text)
        if block.get("type") == "tool_use":
            self._signals.assistant_seen = True
            self._signals.tool_calls += 1
            full = block.get("id")
            if isinstance(full, str) and len(self._signals.open_tools) < _OPEN_TOOLS_MAX:
                self._signals.open_tools.add(full)
            ident = str(full or "")[:12]
            summary = summarize_input(block.get("input"))
            return [one_line(f"tool: {block.get('name')} ({ident}…) {summary}")]
        return []

    def _usage_line(self, message: dict[str, Any]) -> list[str]:
        usage = message.get("usage")
        if not isinstance(usage, dict):
            return []
        ident = str(message.get("id") or len(self._usage))
        first = ident not in self._usage
        self._usage[ident] = _tokens(usage, self._signals)
        if not self._final_usage:
            self._signals.tokens = sum(self._usage.values(), Tokens())
        line = tokens_line(self._usage[ident]) if first else None
        return [line] if line else []

    def _user(self, event: dict[str, Any]) -> list[str]:
        content = as_dict(event.get("message")).get("content")
        lines = []
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                self._signals.open_tools.discard(str(block.get("tool_use_id")))
                lines.append(_tool_result_line(block))
        return lines

    def _rate_limit(self, event: dict[str, Any]) -> list[str]:
        info = as_dict(event.get("rate_limit_info"))
        status = str(info.get("status") or "")
        resets_at = self._signals.sane(epoch_s, info.get("resetsAt"), "resetsAt")
        limit_type = str(info.get("rateLimitType") or "")
        for window in _quota_windows(info, self._signals):
            self._signals.quota[window.name] = window
        if status == "rejected":
            message = f"rate limit rejected ({limit_type or 'unknown'})"
            self._signals.note_error(ErrorSignal(ErrorKind.RATE_LIMIT, message))
            self._signals.note_rate_limit(RateLimitInfo(resets_at=resets_at, message=message))
        if status in ("", "allowed"):
            return []
        return [f"rate limit: {status} {limit_type}, resets {self._local(resets_at)}"]

    def _result(self, event: dict[str, Any]) -> list[str]:
        signals = self._signals
        signals.turns_ended += 1
        signals.open_tools.clear()  # the turn is over: nothing of it still runs
        # claude ends a turn cut at --max-turns with this subtype, `is_error` or not (issue 32)
        is_error = bool(event.get("is_error")) or event.get("subtype") == _MAX_TURNS
        signals.last_turn_ok = not is_error
        self._result_totals(event)
        text = str(event.get("result") or "")
        if is_error:
            return self._result_error(event, text)
        cost = money(event.get("total_cost_usd"))
        done = (f"done · {format_ms(event.get('duration_ms'))} · "
                f"{as_int(event.get('num_turns'))} turns · ${cost or 0:.4f}")
        if not text.strip():
            return ["", done]
        signals.assistant_seen = True  # the final answer is assistant text
        return ["", done, *text_lines("final", text)]

    def _result_error(self, event: dict[str, Any], text: str) -> list[str]:
        status = as_status(event.get("api_error_status"))
        if _interrupt_echo(event) and status is None and not text:
            return [f"turn interrupted ({event.get('terminal_reason') or 'aborted'})"]
        kind = claude_result_error_kind(status, text or str(event.get("subtype") or ""))
        if kind is not None:
            self._signals.note_error(ErrorSignal(kind, text or str(event.get("subtype")), status))
        if kind is ErrorKind.RATE_LIMIT:
            self._signals.note_rate_limit(RateLimitInfo(message=text))
        detail = text or str(event.get("subtype") or "error")
        return [one_line(f"error: {detail} (status {status})")]

    def _result_totals(self, event: dict[str, Any]) -> None:
        usage = event.get("usage")
        if isinstance(usage, dict):
            self._signals.tokens = _tokens(usage, self._signals)
            self._final_usage = True
        raw = event.get("total_cost_usd")
        if raw is not None:  # the session's total so far; a refused one: unknown (estimated)
            self._signals.cost_usd = self._signals.sane(money, raw, COST_FIELD)

    def _local(self, epoch: float | None) -> str:
        if epoch is None:
            return "unknown"
        return datetime.fromtimestamp(epoch, self._zone).strftime("%Y-%m-%d %H:%M %Z").strip()


_HANDLERS: dict[str, Callable[[StreamJsonParser, dict[str, Any]], list[str]]] = {
    "system": StreamJsonParser._system,
    "assistant": StreamJsonParser._assistant,
    "user": StreamJsonParser._user,
    "rate_limit_event": StreamJsonParser._rate_limit,
    "result": StreamJsonParser._result,
}


def _interrupt_echo(event: dict[str, Any]) -> bool:
    """Lines claude prints because aidd interrupted it, not because the model answered: the
    control_response, the `[Request interrupted by user]` echo, the aborted turn's result and
    the init of the next turn (tests/fixtures/realcli/claude/hang_interrupt.stdout)."""
    kind, subtype = event.get("type"), event.get("subtype")
    if kind == "control_response" or (kind, subtype) in (
        ("system", "init"), ("result", "error_during_execution")):
        return True
    if kind != "user":
        return False
    content = as_dict(event.get("message")).get("content")
    texts = [as_dict(b).get("text") for b in content] if isinstance(content, list) else [content]
    return INTERRUPTED in texts


def _quota_windows(info: dict[str, Any], signals: Signals) -> list[QuotaWindow]:
    """The windows a rate_limit_info reports with both their use and their reset: the limiting
    one at the top (`rateLimitType`, `utilization`, `resetsAt`) and each of `unifiedWindows`
    (CLI 2.1.263+). An event without `utilization` (common for `allowed`) gives none. resetsAt
    is in seconds, as claude sends it; a reader's doc says milliseconds: the sanitiser takes
    both."""
    found = [(info.get("rateLimitType"), info)]
    found += list(as_dict(info.get("unifiedWindows")).items())
    windows = []
    for name, raw in found:
        data = as_dict(raw)
        if not isinstance(name, str) or not name or data.get("utilization") is None:
            continue
        used = signals.sane(fraction, data.get("utilization"), "utilization")
        resets = signals.sane(epoch_s, data.get("resetsAt"), "resetsAt")
        if used is not None and resets is not None:
            windows.append(QuotaWindow(name, used, resets))
    return windows


def _tokens(usage: dict[str, Any], signals: Signals) -> Tokens:
    def read(key: str) -> int:
        return signals.sane(count, usage.get(key), key) or 0

    return Tokens(
        input=read("input_tokens"),
        output=read("output_tokens"),
        cache_read=read("cache_read_input_tokens"),
        cache_write=read("cache_creation_input_tokens"),
    )


def _tool_result_line(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        content = " ".join(str(as_dict(p).get("text") or "") for p in content)
    text = one_line(str(content or ""))
    marker = "error " if block.get("is_error") else ""
    return f"result: {marker}{str(block.get('tool_use_id') or '')[:12]}… {cut(text, 200)}"


def interrupt_request() -> bytes:
    """A stream-json control request that aborts the turn in progress. claude reads a user
    message only between turns: without this a nudge waits behind a hung request for ever."""
    request = {"type": "control_request", "request_id": f"aidd-nudge-{next(_NUDGE_IDS)}",
               "request": {"subtype": "interrupt"}}
    return json.dumps(request).encode("ascii") + b"\n"


def user_message(text: str) -> bytes:
    """One stream-json user message line; ASCII-escaped JSON decodes to `text` exactly."""
    message = {"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": text}]}}
    return json.dumps(message).encode("ascii") + b"\n"


class ClaudeCode:
    name = "claude-code"
    binary = "claude"
    display_name = "Claude Code"
    tested_versions: tuple[str, ...] = ("2.1.",)
    nudge_method = NudgeMethod.STDIN
    exit1_success = False
    output_cancels_linger = True
    reports_quota = True  # rate_limit_event: utilization and resetsAt per window

    def argv(self, binary: str, model: str | None) -> list[str]:
        words = [binary, "--print", "--output-format", "stream-json", "--verbose",
                 "--dangerously-skip-permissions", "--no-session-persistence",
                 "--input-format", "stream-json"]
        return words + (["--model", model] if model else [])

    def relaunch_argv(self, binary: str, model: str | None, conversation_id: str) -> list[str]:
        raise NotImplementedError("claude-code nudges through stdin (ADP-10)")

    def conversations_argv(self, binary: str) -> list[str] | None:
        return None  # never needed: claude nudges through stdin

    def pick_conversation(self, listing: bytes, project_dir: Path, since_s: float) -> str | None:
        return None

    def export_argv(self, binary: str, conversation_id: str) -> list[str] | None:
        return None  # the prompt is ahead of any nudge on claude's stdin

    def holds_task(self, export: bytes, conversation_id: str) -> bool | None:
        return None

    def environment(self, base: Mapping[str, str], context: AgentContext) -> dict[str, str]:
        return agent_environment(base, self.name, context)

    def encode_prompt(self, prompt: str) -> bytes:
        return user_message(prompt)

    def encode_nudge(self, text: str) -> bytes:
        """Interrupt the current turn (if any), then the nudge as the next user message."""
        return interrupt_request() + user_message(text)

    def prepare_project(self, root: Path) -> list[tuple[str, str]]:
        return []  # claude runs with --dangerously-skip-permissions: nothing to prepare

    def new_parser(self, zone: tzinfo) -> StreamJsonParser:
        return StreamJsonParser(zone)
