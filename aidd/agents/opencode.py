"""opencode: `opencode run --format json --auto`, prompt on stdin then EOF, nudges by resuming
the conversation (ADP-10, ADP-30, ADP-37, ADP-42). kilocode reuses all of it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import tzinfo
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
from aidd.agents.classify import provider_error_kind
from aidd.agents.jsonlines import (
    as_dict,
    as_status,
    cut,
    decode_event,
    one_line,
    plain_text,
    summarize_input,
    text_lines,
    tokens_line,
)
from aidd.agents.opencode_config import CONFIG as OPENCODE_CONFIG
from aidd.agents.opencode_config import ensure_opencode_permissions
from aidd.agents.ratelimit import RateLimitInfo
from aidd.agents.sessions import export_argv, holds_user_message, list_argv, pick_session
from aidd.numbers import count, money


class RunJsonParser:
    """Events of `run --format json`: step_start, text, tool_use, step_finish, error."""

    def __init__(self) -> None:
        self._signals = Signals()
        self._cost_refused = False

    @property
    def signals(self) -> Signals:
        return self._signals

    def wants(self, data: bytes) -> bool:
        # `b"E" in` is one memchr (~4 us a 256 KiB batch): text without a capital E skips the
        # search for the word, which reads ~1.5 GB/s (a sixth of a 50 MiB flood's routing)
        return b"{" in data or (b"E" in data and b"Error" in data)

    def line(self, raw: bytes) -> list[str]:
        try:
            return self._line(raw)
        except Exception:  # a parser never raises (ADP-35); the raw line is already logged
            return []

    def _line(self, raw: bytes) -> list[str]:
        self._signals.progress += 1
        event = decode_event(raw)
        if event is None:
            self._plain(raw)
            return []
        self._signals.json_seen = True
        session = event.get("sessionID")
        if isinstance(session, str) and session:
            self._signals.conversation_id = session
        handler = _HANDLERS.get(str(event.get("type")))
        return handler(self, event) if handler else []

    def _plain(self, raw: bytes) -> None:
        """The CLI's own `Error:` lines classify like error events (ADP-42)."""
        text = plain_text(raw)
        if not text.startswith("Error:"):
            return
        message = text.removeprefix("Error:").strip()
        self._error(ErrorSignal(provider_error_kind(None, message), message), {})

    def _text(self, event: dict[str, Any]) -> list[str]:
        text = as_dict(event.get("part")).get("text")
        if not isinstance(text, str) or not text.strip():
            return []
        self._signals.assistant_seen = True
        self._signals.assistant_chars += len(text)
        return text_lines("assistant", text)

    def _tool_use(self, event: dict[str, Any]) -> list[str]:
        part = as_dict(event.get("part"))
        state = as_dict(part.get("state"))
        self._signals.assistant_seen = True
        self._signals.tool_calls += 1  # one event per call, when it completes or fails
        error = self._signals.error
        if error is not None and error.kind is ErrorKind.CONTEXT:
            # opencode and kilo compact the conversation after an overflow: work after it
            # means the compaction saved the conversation (issue 32)
            self._signals.error = None
        status = str(state.get("status") or "")
        summary = summarize_input(state.get("input"))
        lines = [one_line(f"tool: {part.get('tool') or '?'} {summary} [{status}]")]
        output = state.get("output") if status == "completed" else state.get("error")
        if status in ("completed", "error") and isinstance(output, str) and output:
            label = "result" if status == "completed" else "result: error"
            lines.append(f"{label}: {cut(one_line(output), 200)}")
        return lines

    def _step_finish(self, event: dict[str, Any]) -> list[str]:
        part = as_dict(event.get("part"))
        raw = as_dict(part.get("tokens"))
        cache = as_dict(raw.get("cache"))
        signals = self._signals

        def read(data: dict[str, Any], key: str, name: str) -> int:
            return signals.sane(count, data.get(key), name) or 0

        step = Tokens(read(raw, "input", "input"), read(raw, "output", "output"),
                      read(raw, "reasoning", "reasoning"), read(cache, "read", "cache.read"),
                      read(cache, "write", "cache.write"))
        signals.tokens = step if signals.tokens is None else signals.tokens + step
        self._add_cost(part.get("cost"))
        if part.get("reason") != "tool-calls":  # the final step (ADP-39)
            signals.turns_ended += 1
            signals.last_turn_ok = True
        line = tokens_line(step)
        return [line] if line else []

    def _add_cost(self, raw: Any) -> None:
        """The attempt's cost is the sum of its steps'; once one is refused the sum is unknown
        (then estimated from the tokens), whatever the later steps say."""
        signals = self._signals
        cost = signals.sane(money, raw, COST_FIELD)
        if cost is None and raw is not None:
            self._cost_refused = True
        if self._cost_refused:
            signals.cost_usd = None
        elif cost is not None:
            signals.cost_usd = (signals.cost_usd or 0.0) + cost

    def _error_event(self, event: dict[str, Any]) -> list[str]:
        raw = event.get("error")
        error = as_dict(raw)
        data = as_dict(error.get("data"))
        name = str(error.get("name") or "Error")
        # kilo 7.7 also sends `"error": "<message>"` as a plain string
        message = str(data.get("message") or error.get("message") or
                      (raw if isinstance(raw, str) else ""))
        status = as_status(data.get("statusCode"))
        kind = provider_error_kind(status, f"{name}: {message}")
        headers = as_dict(data.get("responseHeaders"))
        self._error(ErrorSignal(kind, message or name, status), headers)
        self._signals.turns_ended += 1
        self._signals.last_turn_ok = False
        suffix = f" (status {status})" if status is not None else ""
        return [one_line(f"error: {name}: {message}{suffix}")]

    def _error(self, signal: ErrorSignal, headers: Mapping[str, Any]) -> None:
        self._signals.note_error(signal)
        if signal.kind is ErrorKind.RATE_LIMIT:
            lower = {str(key).lower(): str(value) for key, value in headers.items()}
            self._signals.note_rate_limit(
                RateLimitInfo(
                    retry_after=lower.get("retry-after"),
                    retry_after_ms=lower.get("retry-after-ms"),
                    message=signal.message,
                )
            )


_HANDLERS: dict[str, Callable[[RunJsonParser, dict[str, Any]], list[str]]] = {
    "text": RunJsonParser._text,
    "tool_use": RunJsonParser._tool_use,
    "step_finish": RunJsonParser._step_finish,
    "error": RunJsonParser._error_event,
}


def _model_words(model: str | None) -> list[str]:
    return ["--model", model] if model else []


# Without --auto, `run` auto-rejects every permission prompt: kilo 7.7 then fails (exit 1,
# even for a plain shell command) and opencode 1.18 ends the run with exit 0 mid-task
# (docs/real-clis.md). --auto approves what the config does not explicitly deny.
_AUTO = "--auto"


class OpenCode:
    name = "opencode"
    binary = "opencode"
    display_name = "OpenCode"
    tested_versions: tuple[str, ...] = ("1.18.",)
    nudge_method = NudgeMethod.RELAUNCH
    exit1_success = True  # exit 1 without an error signal: "no more work" (EXIT-3)
    output_cancels_linger = False
    reports_quota = False  # `run --format json` carries no quota use (nor does kilo's)

    def argv(self, binary: str, model: str | None) -> list[str]:
        return [binary, "run", "--format", "json", _AUTO, *_model_words(model)]

    def relaunch_argv(self, binary: str, model: str | None, conversation_id: str) -> list[str]:
        return [binary, "run", "--format", "json", "--session", conversation_id, _AUTO,
                *_model_words(model)]

    def conversations_argv(self, binary: str) -> list[str] | None:
        """A run hung on its first request has printed no sessionID; its session is listed."""
        return list_argv(binary)

    def pick_conversation(self, listing: bytes, project_dir: Path, since_s: float) -> str | None:
        return pick_session(listing, project_dir, since_s)

    def export_argv(self, binary: str, conversation_id: str) -> list[str] | None:
        """kilo stores the prompt seconds after it lists the session (issue 17)."""
        return export_argv(binary, conversation_id)

    def holds_task(self, export: bytes, conversation_id: str) -> bool | None:
        return holds_user_message(export, conversation_id)

    def environment(self, base: Mapping[str, str], context: AgentContext) -> dict[str, str]:
        return agent_environment(base, self.name, context)

    def encode_prompt(self, prompt: str) -> bytes:
        """Raw bytes; the CLI reads its non-terminal stdin to EOF (ADP-21)."""
        return prompt.encode("utf-8", "surrogateescape")

    def encode_nudge(self, text: str) -> bytes:
        return text.encode("utf-8", "surrogateescape")

    def prepare_project(self, root: Path) -> list[tuple[str, str]]:
        """opencode asks before some tools unless opencode.json allows them (LAY-40)."""
        return [(OPENCODE_CONFIG, warning) for warning in ensure_opencode_permissions(root)]

    def new_parser(self, zone: tzinfo) -> RunJsonParser:
        return RunJsonParser()
