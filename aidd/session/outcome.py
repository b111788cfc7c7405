"""What one attempt came to: the one place that turns an ending plus signals into a result,
an outcome and a reason (EXIT-2, EXIT-3, EXIT-5, ADP-43, ADP-44)."""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from aidd.agents.base import ErrorKind, Signals
from aidd.agents.ratelimit import QuotaWindow, Wake
from aidd.errors import ExitCode


class EndCause(Enum):
    """How the agent's run ended, as the engine saw it."""

    EXITED = "exited"
    IDLE = "idle"
    HUNG = "hung"  # --max-nudges nudges answered by no work: killed as for IDLE (issue 28)
    WALL = "timeout"
    LINGER = "linger"
    SIGNAL = "signal"
    BUDGET = "budget"  # the run's --max-wall-time ran out: stopped as for a signal


class Outcome(Enum):
    """`iteration_end.outcome` (LOG-42); decides counting (EXIT-2)."""

    SUCCESS = "success"
    FAILURE = "failure"
    RATE_LIMITED = "rate_limited"
    FATAL = "fatal"


class Reason(Enum):
    """`iteration_end.reason` (LOG-42)."""

    EXIT_STATUS = "exit_status"
    EXIT1_SUCCESS = "exit1_success"
    IDLE_TIMEOUT = "idle_timeout"
    WALL_TIMEOUT = "wall_timeout"
    LINGER = "linger"
    NO_ASSISTANT = "no_assistant"
    PROVIDER_ERROR = "provider_error"
    RATE_LIMITED = "rate_limited"
    FATAL = "fatal"
    SIGNAL = "signal"
    NO_WORK = "no_work"
    CONTEXT_EXHAUSTED = "context_exhausted"
    BUDGET = "budget"


class Verdict(NamedTuple):
    result: int
    outcome: Outcome
    reason: Reason


class SessionOutcome(NamedTuple):
    result: int  # the classified result: an exit code of the README's table
    outcome: Outcome
    reason: Reason
    exit_status: int | None  # the agent's own status (128+N after signal N), None if unknown
    duration_s: float
    bytes_out: int  # agent bytes written to the log
    conversation_id: str | None = None
    tokens: dict[str, int] | None = None  # ADP-38 totals: input, output, reasoning, cache_*
    cost_usd: float | None = None
    wake: Wake | None = None  # result 74: when to retry, and why (SUP-50, ADP-45)
    message: str | None = None  # the classified error's message (fatal: the cause for exit 8)
    interrupted_by: str | None = None  # signal name when aidd was interrupted (SUP-81)
    nudges: int = 0
    killed: str | None = None  # aidd ended the agent: idle, hung, timeout, linger, signal, budget
    launches: int = 1
    tool_calls: int | None = None  # tool uses seen; None when the output held no JSON event
    assistant_chars: int = 0  # characters of assistant text

    def as_no_work(self) -> SessionOutcome:
        """This success did nothing (the run layer saw no tool call and no change): 75."""
        return self._replace(result=int(ExitCode.NO_WORK), outcome=Outcome.FAILURE,
                             reason=Reason.NO_WORK)
    model: str | None = None  # the model the CLI said it used, when it says (claude)
    quota: tuple[QuotaWindow, ...] = ()  # the provider's quota windows as last reported
    # Numbers of the CLI's output the sanitiser refused: (field, the value shown), first of each.
    refused: tuple[tuple[str, str], ...] = ()


_ERROR_VERDICTS = {
    ErrorKind.RATE_LIMIT: Verdict(ExitCode.RATE_LIMITED, Outcome.RATE_LIMITED, Reason.RATE_LIMITED),
    ErrorKind.FATAL: Verdict(ExitCode.CLI_ERROR, Outcome.FATAL, Reason.FATAL),
    ErrorKind.CONTEXT: Verdict(ExitCode.CONTEXT_EXHAUSTED, Outcome.FAILURE,
                               Reason.CONTEXT_EXHAUSTED),
    ErrorKind.PROVIDER: Verdict(ExitCode.PROVIDER_ERROR, Outcome.FAILURE, Reason.PROVIDER_ERROR),
    ErrorKind.NO_ASSISTANT: Verdict(ExitCode.NO_ASSISTANT, Outcome.FAILURE, Reason.NO_ASSISTANT),
}
# aidd itself ended the attempt: whatever the agent printed, that is the result.
_STOP_VERDICTS = {
    EndCause.SIGNAL: Verdict(ExitCode.TIMEOUT_OR_SIGNAL, Outcome.FAILURE, Reason.SIGNAL),
    EndCause.BUDGET: Verdict(ExitCode.BUDGET_EXHAUSTED, Outcome.FAILURE, Reason.BUDGET),
}
_KILL_VERDICTS = {
    EndCause.WALL: Verdict(ExitCode.TIMEOUT_OR_SIGNAL, Outcome.FAILURE, Reason.WALL_TIMEOUT),
    EndCause.IDLE: Verdict(ExitCode.IDLE_TIMEOUT, Outcome.FAILURE, Reason.IDLE_TIMEOUT),
    EndCause.HUNG: Verdict(ExitCode.IDLE_TIMEOUT, Outcome.FAILURE, Reason.IDLE_TIMEOUT),
}


def classify(
    cause: EndCause, exit_status: int | None, signals: Signals, *, exit1_success: bool
) -> Verdict:
    """Priority: signal to aidd or its wall-time budget > 74 > fatal > 124 > 71 > 76 > 72 > 70
    > raw status (EXIT-5)."""
    if cause in _STOP_VERDICTS:
        return _STOP_VERDICTS[cause]
    error = signals.error.kind if signals.error else None
    if error in (ErrorKind.RATE_LIMIT, ErrorKind.FATAL):
        return _ERROR_VERDICTS[error]
    if cause in _KILL_VERDICTS:
        return _KILL_VERDICTS[cause]
    if error is not None:
        return _ERROR_VERDICTS[error]
    return _by_status(cause, exit_status, signals, exit1_success)


def _by_status(
    cause: EndCause, status: int | None, signals: Signals, exit1_success: bool
) -> Verdict:
    if cause is EndCause.EXITED and status == 1 and exit1_success:
        return Verdict(ExitCode.SUCCESS, Outcome.SUCCESS, Reason.EXIT1_SUCCESS)
    if not signals.assistant_seen:
        return _ERROR_VERDICTS[ErrorKind.NO_ASSISTANT]
    if cause is EndCause.LINGER:  # killed by aidd: the result comes from the final event
        ok = signals.last_turn_ok
        return Verdict(0 if ok else 1, Outcome.SUCCESS if ok else Outcome.FAILURE, Reason.LINGER)
    if status == 0:
        return Verdict(ExitCode.SUCCESS, Outcome.SUCCESS, Reason.EXIT_STATUS)
    return Verdict(1 if status is None else status, Outcome.FAILURE, Reason.EXIT_STATUS)
