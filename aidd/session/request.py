"""What the run asks of one attempt (`AttemptRequest`): the agent, its prompt, its limits and the
run's signal flag; `runner.run_attempt` carries it out."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import tzinfo
from pathlib import Path
from typing import Protocol

from aidd.agents.base import Adapter
from aidd.clock import Clock, SystemClock
from aidd.events import EventLog
from aidd.logs.transcript import Transcript


class InterruptFlag(Protocol):
    """Set by aidd's signal handler (run.signals.Interrupt); a second signal makes it urgent."""

    def is_set(self) -> bool: ...

    def fileno(self) -> int:
        """Becomes readable when the flag is set (wakes the attempt's poll)."""
        ...

    @property
    def name(self) -> str | None: ...

    @property
    def urgent(self) -> bool: ...


@dataclass(frozen=True)
class AttemptRequest:
    adapter: Adapter
    binary: str  # path of the CLI found on PATH
    project_dir: Path
    prompt: str
    transcript: Transcript
    events: EventLog
    number: int  # the log number NNN
    model: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)  # aidd's environment; ADP-11 applied
    prompt_kind: str = ""
    audit_name: str | None = None
    timeout_s: float = 3600  # 0 = no wall-clock limit
    idle_timeout_s: float = 900  # 0 = no idle supervision
    idle_nudge_s: float = 300  # 0 = no nudge
    max_nudges: int = 3  # nudges without work before the agent counts as hung; 0 = no cap
    kill_grace_s: float = 5.0
    nudge_text: str = ""
    keep_children: bool = False
    clock: Clock = field(default_factory=SystemClock)
    interrupt: InterruptFlag | None = None
    rate_limit_buffer_s: float = 60
    rate_limit_fallback_s: float = 300
    drain_quiet_s: float = 1.0
    linger_cap_s: float = 30.0
    zone: tzinfo | None = None  # for reset times; None = the clock's local zone
    before_kill: Callable[[], object] | None = None  # e.g. a checkpoint of what the agent did
    # The run's --max-wall-time ends at this clock.monotonic() instant: the attempt is stopped
    # there as for a signal, result 9 (the run then ends with 9).
    deadline_s: float | None = None
    # Liveness (issue 17): "signals" judges a silent agent from its tool calls, its tree's CPU
    # and `file_activity` (when a project file last changed, monotonic); "output": silence is
    # idle. Busy time counts as life for at most `busy_timeout_s` after the last output (0: no
    # bound but the wall clock).
    liveness: str = "signals"
    busy_timeout_s: float = 0
    file_activity: Callable[[], float | None] | None = None
    # --parallel N: waits for this agent's turn to start and returns the call that lets the
    # next one start, made at its first output (or its end). Two opencode or kilo processes
    # starting at once can find their one local database locked (docs/parallel.md).
    start_turn: Callable[[], Callable[[], None]] | None = None
