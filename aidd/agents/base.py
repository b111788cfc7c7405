"""The adapter interface: everything aidd knows about one agent CLI, and the signals its
output yields (ADP-1). The session engine talks only to these types."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import tzinfo
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar

from aidd.agents.ratelimit import QuotaWindow, RateLimitInfo
from aidd.numbers import shown


class NudgeMethod(Enum):
    """How a nudge reaches the conversation (ADP-30); the values are `nudge.method` (LOG-42)."""

    STDIN = "stdin"  # a user message on the still-open stdin
    RELAUNCH = "relaunch"  # interrupt, then resume the conversation with the nudge on stdin


class ErrorKind(Enum):
    """A classified error signal, most important first (EXIT-5)."""

    RATE_LIMIT = "rate_limited"
    FATAL = "fatal"
    # the conversation ran out of context or turns: resuming it cannot help (issue 32)
    CONTEXT = "context_exhausted"
    PROVIDER = "provider_error"
    NO_ASSISTANT = "no_assistant"


_RANK = {kind: rank for rank, kind in enumerate(ErrorKind)}
_Number = TypeVar("_Number", int, float)
# The name a refused cost is noted under, whatever the CLI calls the field: the run looks for it
# (an unknown cost it cannot estimate either ends a run that has a cost budget).
COST_FIELD = "cost_usd"


class ErrorSignal(NamedTuple):
    kind: ErrorKind
    message: str
    status: int | None = None


@dataclass(frozen=True)
class Tokens:
    input: int = 0
    output: int = 0
    reasoning: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            self.input + other.input,
            self.output + other.output,
            self.reasoning + other.reasoning,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
        )

    def any(self) -> bool:
        return any(self.as_dict().values())

    def as_dict(self) -> dict[str, int]:
        return {
            "input": self.input,
            "output": self.output,
            "reasoning": self.reasoning,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
        }


@dataclass
class Signals:
    """What a parser learned from one attempt's output; updated line by line."""

    conversation_id: str | None = None
    model: str | None = None
    json_seen: bool = False
    assistant_seen: bool = False  # assistant text or a tool use (ADP-43)
    tool_calls: int = 0  # tool uses seen: an attempt without one did no work (issue 15)
    # Tool calls started and not yet answered (claude's tool_use ids without a tool_result): the
    # agent is busy, not hung, while one runs (issue 17). opencode and kilo print a tool only
    # once it finished, so theirs stays empty.
    open_tools: set[str] = field(default_factory=set)
    assistant_chars: int = 0  # characters of assistant text, the final answer's repeat excluded
    turns_ended: int = 0  # result events (claude) / final step_finish or error (opencode, kilo)
    # Lines showing the agent at work; not the echo of aidd's own interrupt (claude's
    # control_response, interrupted-turn result and the next init: see docs/real-clis.md).
    progress: int = 0
    last_turn_ok: bool = True
    error: ErrorSignal | None = None
    rate_limit: RateLimitInfo = field(default_factory=RateLimitInfo)
    quota: dict[str, QuotaWindow] = field(default_factory=dict)  # by window; the newest wins
    tokens: Tokens | None = None
    cost_usd: float | None = None
    # Numbers the sanitiser refused (NaN, Infinity, negative, out of range), by field: the
    # first value of each, for one warning after the attempt (issue 27).
    refused: dict[str, str] = field(default_factory=dict)

    def sane(self, read: Callable[[Any], _Number | None], value: Any,
             name: str) -> _Number | None:
        """`value` through `read`, a sanitiser of `aidd.numbers`; a value that is there but
        refused is noted under `name` and reads as unknown (None)."""
        number = read(value)
        if number is None and value is not None:
            self.refused.setdefault(name, shown(value))
        return number

    def note_error(self, signal: ErrorSignal) -> None:
        """Keep the most important error seen (74 > fatal > 76 > 72 > 70)."""
        if self.error is None or _RANK[signal.kind] < _RANK[self.error.kind]:
            self.error = signal

    def note_rate_limit(self, info: RateLimitInfo) -> None:
        self.rate_limit = self.rate_limit.merged(info)


class LineParser(Protocol):
    """Turns complete output lines into rendered lines and signals (ADP-35..39)."""

    @property
    def signals(self) -> Signals: ...

    def line(self, raw: bytes) -> list[str]:
        """One line without its newline -> rendered lines (no `» `, no newline). Never raises."""
        ...

    def wants(self, data: bytes) -> bool:
        """Could a line within `data` matter? False lets the router skip parsing (speed)."""
        ...


class AgentContext(NamedTuple):
    """Facts about the attempt that the agent's environment carries (ADP-11)."""

    project_dir: Path
    log_number: int
    prompt_kind: str = ""
    audit_name: str | None = None
    aidd_version: str = ""


class Adapter(Protocol):
    """One agent CLI (ADP-1). Implementations: opencode.py, kilocode.py, claude_code.py."""

    @property
    def name(self) -> str:
        """The `--cli` value."""
        ...

    @property
    def binary(self) -> str: ...

    @property
    def display_name(self) -> str: ...

    @property
    def tested_versions(self) -> tuple[str, ...]:
        """Version prefixes aidd was tested with, e.g. `("2.1.",)` (ADP-4)."""
        ...

    @property
    def nudge_method(self) -> NudgeMethod: ...

    @property
    def exit1_success(self) -> bool:
        """Exit 1 without a classified error means "nothing more to do" (EXIT-3)."""
        ...

    @property
    def output_cancels_linger(self) -> bool:
        """New output after a terminal event cancels the linger state (SUP-35)."""
        ...

    @property
    def reports_quota(self) -> bool:
        """Its output reports how much of the provider's quota windows is used (--pace-at)."""
        ...

    def argv(self, binary: str, model: str | None) -> list[str]: ...

    def relaunch_argv(self, binary: str, model: str | None, conversation_id: str) -> list[str]:
        """The nudge relaunch (ADP-10); only called when `nudge_method` is RELAUNCH."""
        ...

    def conversations_argv(self, binary: str) -> list[str] | None:
        """The helper command listing the CLI's conversations, for a run whose output named
        none yet (RELAUNCH only); None when the CLI needs no lookup."""
        ...

    def pick_conversation(self, listing: bytes, project_dir: Path, since_s: float) -> str | None:
        """From that command's output: the conversation this run started (at or after
        `since_s`, in `project_dir`), else None."""
        ...

    def export_argv(self, binary: str, conversation_id: str) -> list[str] | None:
        """The helper command showing one conversation, for a nudge before the CLI printed
        anything (RELAUNCH only); None when the CLI has none."""
        ...

    def holds_task(self, export: bytes, conversation_id: str) -> bool | None:
        """From that command's output: does the conversation hold the prompt (a user message)?
        None when the output does not tell."""
        ...

    def environment(self, base: Mapping[str, str], context: AgentContext) -> dict[str, str]: ...

    def encode_prompt(self, prompt: str) -> bytes: ...

    def encode_nudge(self, text: str) -> bytes: ...

    def new_parser(self, zone: tzinfo) -> LineParser: ...

    def prepare_project(self, root: Path) -> list[tuple[str, str]]:
        """Make the project ready for an unattended run of this CLI before each attempt;
        returns warnings to show, each with the project file it is about."""
        ...


_DROPPED = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")  # make claude refuse to run nested
_DEFAULTS = {"PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb"}


def agent_environment(
    base: Mapping[str, str], cli: str, context: AgentContext
) -> dict[str, str]:
    """aidd's environment for the agent (ADP-11); sets no API keys."""
    env = {key: value for key, value in base.items() if key not in _DROPPED}
    for key, value in _DEFAULTS.items():
        env.setdefault(key, value)
    env.pop("AIDD_AUDIT_NAME", None)
    env.update(
        AIDD_VERSION=context.aidd_version,
        AIDD_PROJECT_DIR=str(context.project_dir.absolute()),
        AIDD_CLI=cli,
        AIDD_ITERATION=str(context.log_number),
        AIDD_PROMPT_KIND=context.prompt_kind,
    )
    if context.audit_name:
        env["AIDD_AUDIT_NAME"] = context.audit_name
    return env
