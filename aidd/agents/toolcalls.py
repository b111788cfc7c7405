"""Tool calls, results, errors and usage from the agents' raw JSON events, for extract.py.

claude stream-json: `assistant` tool_use blocks, `user` tool_result blocks, `result` usage/cost
(ADP-36, ADP-38). opencode/kilo: `tool_use` events (`part.tool`, `part.state.input/output/status`,
`part.state.metadata.exit`), `step_finish` tokens/cost, `error` events (ADP-37).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import Any

from aidd.numbers import count, delay_s, epoch_s, money


class ToolKind(Enum):
    EDIT = "edit"
    READ = "read"
    WRITE = "write"
    SHELL = "shell"
    OTHER = "other"


_KINDS = {
    "edit": ToolKind.EDIT,
    "multiedit": ToolKind.EDIT,
    "notebookedit": ToolKind.EDIT,
    "patch": ToolKind.EDIT,
    "apply_patch": ToolKind.EDIT,
    "str_replace": ToolKind.EDIT,
    "read": ToolKind.READ,
    "notebookread": ToolKind.READ,
    "view": ToolKind.READ,
    "write": ToolKind.WRITE,
    "create": ToolKind.WRITE,
    "bash": ToolKind.SHELL,
    "shell": ToolKind.SHELL,
}
_TARGET_KEYS = (
    "file_path",
    "filePath",
    "notebook_path",
    "path",
    "command",
    "pattern",
    "url",
    "query",
    "description",
)
_EXIT_CODE = re.compile(r"^\s*exit code:? *(-?\d+)", re.I)
_ERROR_TYPES = (
    (
        "permission",
        re.compile(
            r"permission denied|\beacces\b|\beperm\b|not permitted|"
            r"rejected permission|permission",
            re.I,
        ),
    ),
    ("timeout", re.compile(r"timed? ?out\b|timeout", re.I)),
    ("typescript", re.compile(r"\berror TS\d+|\bTS\d{4,5}\b|typescript|\btsc\b", re.I)),
    ("lint", re.compile(r"lint|\bruff\b|flake8|stylelint|\bbiome\b|clippy|\d+ problems?\b", re.I)),
    (
        "build",
        re.compile(
            r"build|compil(?:e|ation|er)|cannot find module|module not found|"
            r"npm err!|make: \*\*\*|error\[e\d+\]",
            re.I,
        ),
    ),
)
_MAX_TARGET = 500
_MAX_MESSAGE = 500


def classify_error(message: str) -> str:
    """LOG-32 error type of a message: the first matching family, else `general`."""
    for kind, pattern in _ERROR_TYPES:
        if pattern.search(message):
            return kind
    return "general"


@dataclass(frozen=True)
class Call:
    """One tool call; `content` is a write call's file text (for the feature description)."""

    tool: str
    kind: ToolKind
    target: str | None
    line: int
    content: str | None = None
    exit_code: int | None = None

    def relative_to(self, project: Path | None) -> Call:
        if project is None or not self.target or self.kind is ToolKind.SHELL:
            return self
        for root in {str(project), str(project.resolve())}:
            prefix = root.rstrip("/") + "/"
            if self.target.startswith(prefix):
                return replace(self, target=self.target[len(prefix) :])
        return self


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return count(value) or 0


def _target(tool_input: dict[str, Any]) -> str | None:
    for key in _TARGET_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value[:_MAX_TARGET]
    return None


def _result_text(content: Any) -> str:
    """A claude tool_result's content: a string or a list of text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(_dict(b).get("text", "")) for b in content)
    return ""


class EventReader:
    """Accumulates what the JSON events of one log say, in log order."""

    def __init__(self) -> None:
        self._calls: dict[str, Call] = {}
        self.errors: list[dict[str, Any]] = []
        self.cli_hint: str | None = None
        self.first_s: float | None = None  # Unix seconds of the first and last timestamps
        self.last_s: float | None = None
        self.duration_ms: float | None = None
        self._claude_usage: dict[str, dict[str, Any]] = {}
        self._claude_result: dict[str, Any] | None = None
        self._step_tokens: list[dict[str, Any]] = []
        self._step_costs: list[float] = []
        self._step_cost_refused = False  # one step's cost was refused: the sum is unknown

    @property
    def calls(self) -> list[Call]:
        return list(self._calls.values())

    def event(self, line: int, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if "part" in obj or "sessionID" in obj:
            self.cli_hint = self.cli_hint or "opencode"
            self._timestamp(obj.get("timestamp"))
        elif "session_id" in obj:
            self.cli_hint = self.cli_hint or "claude-code"
        match kind:
            case "assistant":
                self._assistant(line, _dict(obj.get("message")))
            case "user":
                self._user(line, _dict(obj.get("message")))
            case "result":
                self._result(line, obj)
            case "tool_use":
                self._opencode_tool(line, _dict(obj.get("part")))
            case "step_finish":
                self._step_finish(_dict(obj.get("part")))
            case "error":
                self._opencode_error(line, _dict(obj.get("error")))

    def text_call(self, line: int, tool: str, target: str) -> None:
        """A tool call recognised in a non-JSON line (LOG-33 fallback)."""
        kind = _KINDS.get(tool.lower(), ToolKind.OTHER)
        self._calls[f"text:{line}"] = Call(tool, kind, target[:_MAX_TARGET], line)

    def _timestamp(self, value: Any) -> None:
        stamp = epoch_s(value)  # opencode's are milliseconds; a forged 1e30 is none
        if stamp is not None:
            self.first_s = stamp if self.first_s is None else self.first_s
            self.last_s = stamp

    def _add_call(self, key: str, line: int, tool: str, tool_input: dict[str, Any]) -> None:
        if key in self._calls:
            return
        kind = _KINDS.get(tool.lower(), ToolKind.OTHER)
        content = tool_input.get("content") if kind is ToolKind.WRITE else None
        self._calls[key] = Call(
            tool, kind, _target(tool_input), line, content if isinstance(content, str) else None
        )

    def _error(self, line: int, message: str, context: str = "") -> None:
        text = message.strip() or "tool call failed"
        self.errors.append(
            {
                "type": classify_error(f"{context}\n{text}"),
                "message": text[:_MAX_MESSAGE],
                "lineNumber": line,
            }
        )

    # -- claude stream-json ----------------------------------------------------------------
    def _assistant(self, line: int, message: dict[str, Any]) -> None:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            block = _dict(block)
            if block.get("type") == "tool_use":
                key = str(block.get("id") or f"line:{line}")
                self._add_call(key, line, str(block.get("name") or "?"), _dict(block.get("input")))
        usage = message.get("usage")
        if isinstance(usage, dict):
            self._claude_usage[str(message.get("id") or f"line:{line}")] = usage

    def _user(self, line: int, message: dict[str, Any]) -> None:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            block = _dict(block)
            if block.get("type") != "tool_result":
                continue
            call = self._calls.get(str(block.get("tool_use_id")))
            text = _result_text(block.get("content"))
            failed = block.get("is_error") is True
            if call is not None and call.kind is ToolKind.SHELL:
                code = _EXIT_CODE.match(text) if failed else None
                exit_code = int(code.group(1)) if code else (None if failed else 0)
                self._calls[str(block.get("tool_use_id"))] = replace(call, exit_code=exit_code)
            if failed:
                self._error(line, text, (call.target or "") if call else "")

    def _result(self, line: int, obj: dict[str, Any]) -> None:
        self._claude_result = obj
        duration_ms = delay_s(obj.get("duration_ms"))
        if duration_ms is not None:
            self.duration_ms = duration_ms
        if obj.get("is_error") is True:
            self._error(line, str(obj.get("result") or obj.get("subtype") or "error"))

    # -- opencode / kilo -------------------------------------------------------------------
    def _opencode_tool(self, line: int, part: dict[str, Any]) -> None:
        state = _dict(part.get("state"))
        key = str(part.get("callID") or part.get("id") or f"line:{line}")
        self._add_call(key, line, str(part.get("tool") or "?"), _dict(state.get("input")))
        call = self._calls[key]
        exit_code = _dict(state.get("metadata")).get("exit")
        if isinstance(exit_code, int) and not isinstance(exit_code, bool):
            self._calls[key] = replace(call, exit_code=exit_code)
        output = state.get("output") or state.get("error") or ""
        if state.get("status") == "error" or (isinstance(exit_code, int) and exit_code != 0):
            self._error(line, str(output), call.target or "")

    def _step_finish(self, part: dict[str, Any]) -> None:
        tokens = part.get("tokens")
        if isinstance(tokens, dict):
            self._step_tokens.append(tokens)
        cost = money(part.get("cost"))
        if cost is not None:
            self._step_costs.append(cost)
        self._step_cost_refused |= cost is None and part.get("cost") is not None

    def _opencode_error(self, line: int, error: dict[str, Any]) -> None:
        data = _dict(error.get("data"))
        message = data.get("message") or error.get("message") or ""
        self._error(line, f"{error.get('name') or 'error'}: {message}")

    # -- totals (ADP-38) -------------------------------------------------------------------
    def tokens(self) -> dict[str, int] | None:
        if self._claude_result is not None and isinstance(self._claude_result.get("usage"), dict):
            return _claude_tokens([self._claude_result["usage"]])
        if self._claude_usage:
            return _claude_tokens(list(self._claude_usage.values()))
        if self._step_tokens:
            return _opencode_tokens(self._step_tokens)
        return None

    def cost(self) -> float | None:
        if self._claude_result is not None:
            return money(self._claude_result.get("total_cost_usd"))
        if self._step_cost_refused or not self._step_costs:
            return None
        return round(sum(self._step_costs), 6)


def _claude_tokens(usages: list[dict[str, Any]]) -> dict[str, int]:
    def total(key: str) -> int:
        return sum(_int(u.get(key)) for u in usages)

    return {
        "input": total("input_tokens"),
        "output": total("output_tokens"),
        "reasoning": 0,
        "cacheRead": total("cache_read_input_tokens"),
        "cacheWrite": total("cache_creation_input_tokens"),
    }


def _opencode_tokens(steps: list[dict[str, Any]]) -> dict[str, int]:
    def total(key: str, sub: str | None = None) -> int:
        return sum(_int(_dict(s.get(key)).get(sub) if sub else s.get(key)) for s in steps)

    return {
        "input": total("input"),
        "output": total("output"),
        "reasoning": total("reasoning"),
        "cacheRead": total("cache", "read"),
        "cacheWrite": total("cache", "write"),
    }
