"""A scripted agent session for in-process loop tests: each attempt edits the project as told,
moves the fake clock, and ends with the outcome given. No process, no pty."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, timedelta
from pathlib import Path

from aidd.agents.ratelimit import QuotaWindow, RateLimitInfo, Wake, WakeSource, wake_time
from aidd.errors import ExitCode
from aidd.session.outcome import Outcome, Reason, SessionOutcome
from aidd.session.request import AttemptRequest
from tests.fakes.clock import FakeClock

Edit = Callable[[Path], None]


@dataclass(frozen=True)
class Turn:
    """One attempt of the fake agent."""

    result: int = 0
    outcome: Outcome = Outcome.SUCCESS
    reason: Reason = Reason.EXIT_STATUS
    duration_s: float = 5.0
    edit: Edit | None = None  # runs in the project while the "agent" works
    during: Callable[[AttemptRequest], None] | None = None  # e.g. a stop request or a signal
    wake_in_s: float | None = None  # rate limited: retry after this long
    # rate limited: the `resetsAt` the CLI reported, raw (Unix seconds, or NaN, or 1e20): the
    # wake comes from the real `wake_time`, as the session runner's does
    resets_at: float | None = None
    message: str | None = None
    tool_calls: int | None = 1  # a scripted agent works unless the test says it did nothing
    assistant_chars: int = 40
    tokens: dict[str, int] | None = None  # what the CLI reported using
    cost_usd: float | None = None
    model: str | None = None  # the model the CLI said it used
    quota: tuple[QuotaWindow, ...] = ()  # quota windows, `resets_at` relative to the attempt's end
    killed: str | None = None  # aidd ended it: idle, hung, timeout, ...
    nudges: int = 0
    rendered: tuple[str, ...] = ()  # lines rendered from the CLI's events, to the log (`» `)


def success(edit: Edit | None = None, **kw: object) -> Turn:
    return Turn(edit=edit, **kw)  # type: ignore[arg-type]


def no_work(edit: Edit | None = None, **kw: object) -> Turn:
    """Exit 0 without a tool call and with a few words: result 75 unless `edit` changes the
    project."""
    return Turn(**{"edit": edit, "tool_calls": 0, "assistant_chars": 42, **kw})  # type: ignore[arg-type]


def failure(result: int = 1, reason: Reason = Reason.EXIT_STATUS, **kw: object) -> Turn:
    return Turn(result, Outcome.FAILURE, reason, **kw)  # type: ignore[arg-type]


def wall_timeout(**kw: object) -> Turn:
    return failure(ExitCode.TIMEOUT_OR_SIGNAL, Reason.WALL_TIMEOUT, **kw)


def rate_limited(wake_in_s: float, **kw: object) -> Turn:
    return Turn(ExitCode.RATE_LIMITED, Outcome.RATE_LIMITED, Reason.RATE_LIMITED,
                wake_in_s=wake_in_s, **kw)  # type: ignore[arg-type]


def rate_limited_until(resets_at: float, **kw: object) -> Turn:
    return Turn(ExitCode.RATE_LIMITED, Outcome.RATE_LIMITED, Reason.RATE_LIMITED,
                resets_at=resets_at, **kw)  # type: ignore[arg-type]


def fatal(message: str) -> Turn:
    return Turn(ExitCode.CLI_ERROR, Outcome.FATAL, Reason.FATAL, message=message)


@dataclass
class FakeSession:
    """Plays `turns` in order (the last one repeats) and keeps every request it got."""

    clock: FakeClock
    turns: list[Turn]
    requests: list[AttemptRequest] = field(default_factory=list)

    def __call__(self, request: AttemptRequest) -> SessionOutcome:
        turn = self.turns[min(len(self.requests), len(self.turns) - 1)]
        self.requests.append(request)
        request.transcript.agent(f"fake agent: attempt {request.number}\n".encode())
        for line in turn.rendered:
            request.transcript.rendered(line)
        if turn.edit is not None:
            turn.edit(request.project_dir)
        if turn.during is not None:
            turn.during(request)
        self.clock.advance(turn.duration_s)
        wake = None
        if turn.wake_in_s is not None:
            at = self.clock.now() + timedelta(seconds=turn.wake_in_s)
            wake = Wake(at, WakeSource.RETRY_AFTER, None, "slow down")
        if turn.resets_at is not None:
            wake = wake_time(RateLimitInfo(resets_at=turn.resets_at, message="limit reached"),
                             self.clock.now(), UTC, request.rate_limit_buffer_s,
                             request.rate_limit_fallback_s)
        now_s = self.clock.now().timestamp()
        quota = tuple(QuotaWindow(w.name, w.utilization, now_s + w.resets_at) for w in turn.quota)
        return SessionOutcome(
            result=turn.result, outcome=turn.outcome, reason=turn.reason,
            exit_status=turn.result if turn.outcome is not Outcome.RATE_LIMITED else 1,
            duration_s=turn.duration_s, bytes_out=32, wake=wake, message=turn.message,
            tool_calls=turn.tool_calls, assistant_chars=turn.assistant_chars,
            tokens=turn.tokens, cost_usd=turn.cost_usd, model=turn.model, quota=quota,
            killed=turn.killed, nudges=turn.nudges)

    @property
    def kinds(self) -> list[str]:
        return [r.prompt_kind for r in self.requests]
