"""How a run ends, as a value (`RunEnd`), and what it has counted so far (`Counters`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

from aidd.errors import ExitCode
from aidd.numbers import count, money


class EndReason(Enum):
    """`run_end.reason` in events.jsonl (LOG-42)."""

    DONE = "done"
    COMPLETED = "completed"
    STOPPED = "stopped"
    SIGNAL = "signal"
    QUIT_ON_ABORT = "quit_on_abort"
    FATAL = "fatal"
    ERROR = "error"
    BUDGET = "budget"  # a budget is exhausted (exit 9)
    # nothing workable left but the features this run set aside (circular fixes, issue 32)
    SET_ASIDE = "set_aside"


class RunEnd(NamedTuple):
    """The run is over: its exit code, why, and for a fatal end the agent CLI's own words."""

    code: int
    reason: EndReason
    message: str = ""


DONE = RunEnd(ExitCode.SUCCESS, EndReason.DONE)
COMPLETED = RunEnd(ExitCode.PROJECT_COMPLETE, EndReason.COMPLETED)
STOPPED = RunEnd(ExitCode.ABORTED, EndReason.STOPPED)


@dataclass
class Counters:
    """What the run has done so far, across its phases (SUP-62)."""

    next_number: int = 1  # the next NNN.log
    attempts: int = 0  # agent runs, rate-limited ones included
    iterations: int = 0  # attempts that counted
    consecutive_failures: int = 0
    failures: int = 0
    rate_limit_sleeps: int = 0
    paused_s: float = 0.0
    tokens: dict[str, int] = field(default_factory=dict)
    cost_usd: float | None = None
    cost_estimated: bool = False  # some of cost_usd is aidd's estimate, not the CLI's figure
    completion_confirmed: bool = False
    # The last completion review did no work (result 75): it confirms nothing (issue 15).
    review_did_no_work: bool = False

    def take_number(self) -> int:
        number = self.next_number
        self.next_number += 1
        self.attempts += 1
        return number

    def add_usage(self, tokens: dict[str, int] | None, cost: float | None,
                  estimated: bool = False) -> None:
        for key, value in (tokens or {}).items():
            self.tokens[key] = self.tokens.get(key, 0) + (count(value) or 0)
        cost = money(cost)
        if cost is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost
            self.cost_estimated = self.cost_estimated or estimated


def format_cost(usd: float, estimated: bool) -> str:
    """`$0.0123`, or `~$0.0123 (estimated)` when aidd worked it out from tokens."""
    return f"~${usd:.4f} (estimated)" if estimated else f"${usd:.4f}"


def format_duration(seconds: float) -> str:
    """`Xs`, `Xm Ys` or `Xh Ym Zs`, as log trailers show a duration (SUP-96)."""
    total = round(seconds)
    if total < 60:
        if seconds < 1:
            return f"{seconds:.2f}s"  # a quick attempt reads 0.04s, not 0.0s
        return f"{seconds:.1f}s" if seconds < 10 else f"{total}s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes}m {secs}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes}m {secs}s"
