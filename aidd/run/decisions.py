"""The decisions around each attempt: gates before it, counting and progress after it.

Steps 3-4 (completion, findings, mode early stop) and 13-17 (rate-limit sleep, counting,
audit findings, stuck detection) of SUP-3, as functions of the run context.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from aidd.errors import ExitCode
from aidd.run.outcomes import EndReason, PhaseEnd, PhaseKind, RunExit
from aidd.session.outcome import Outcome

if TYPE_CHECKING:
    from aidd.run.context import RunContext
    from aidd.run.iteration import Attempt
    from aidd.run.supervisor import Phase, PhaseState

STUCK_LIMIT = 3
# ADP-44: the one line names the cause (the CLI's own words) and a hint; fatal causes are
# authentication (401/403, login), billing, or permissions (e.g. claude refusing to run as root).
FATAL_HINT = "fix the agent CLI's authentication, billing or permissions, then run aidd again"


@dataclass(frozen=True)
class Gate:
    end: PhaseEnd | None = None
    completion_review: bool = False


def gate(ctx: RunContext, phase: Phase, state: PhaseState) -> Gate:
    """Steps 3 and 4: may end the phase, exit 73, or make this iteration a completion review."""
    if phase.kind is PhaseKind.MAIN and not ctx.settings.prompt:
        review = _completion(ctx)
        if review:
            return Gate(completion_review=True)
    if phase.kind is PhaseKind.REMEDIATION and ctx.unfixed_findings() == 0:
        ctx.say("no unfixed findings left")
        return Gate(PhaseEnd.FINDINGS_FIXED)
    if phase.kind is PhaseKind.MAIN and ctx.plan.post_audits and ctx.counters.completion_confirmed:
        return Gate(PhaseEnd.COMPLETION_CONFIRMED)
    done = _mode_done(ctx, phase, state)
    if done is not None:
        kind, reason, report = done
        ctx.say(f"{kind} mode done ({reason.replace('_', ' ')}); ending the phase")
        ctx.events.emit("mode_done", kind=kind, reason=reason, report=report)
        return Gate(PhaseEnd.MODE_DONE)
    return Gate()


def _completion(ctx: RunContext) -> bool:
    """CMP-10; True when this iteration is the completion review."""
    from aidd.project.completion import CompletionOutcome, completion_step

    verdict = completion_step(ctx.plan.paths, ctx.plan.feature_filter, ctx.clock.now())
    state = verdict.state
    if verdict.event_state is not None:
        ctx.events.emit("completion", state=verdict.event_state, features=state.counted,
                        failing=len(state.failing), blocking_todos=len(state.blocking_todos))
    if verdict.outcome is CompletionOutcome.PENDING:
        ctx.say("all features pass and no TODO blocks: completion pending, running a review")
        return True
    if not verdict.confirmed:
        return False
    if verdict.outcome is CompletionOutcome.ALREADY_COMPLETED:
        ctx.say("project already completed")
    ctx.say("project completion confirmed")
    ctx.counters.completion_confirmed = True
    if ctx.plan.post_audits:
        return False  # the gate ends the main phase; the audits run next (AUD-30)
    raise RunExit(ExitCode.PROJECT_COMPLETE, EndReason.COMPLETED)


def _mode_done(ctx: RunContext, phase: Phase,
               state: PhaseState) -> tuple[str, str, str | None] | None:
    from aidd.project import completion

    s = ctx.settings
    if phase.kind in (PhaseKind.AUDIT, PhaseKind.POST_COMPLETION_AUDIT):
        report = ctx.audit_report(phase, state)
        return ("audit", "audit_report", report) if report else None
    if phase.kind is not PhaseKind.MAIN or s.prompt or not s.stop_when_done:
        return None
    if s.todo and completion.todo_mode_done(ctx.plan.paths):
        return ("todo", "no_actionable_todo", None)
    if not s.todo and not s.validate and s.in_progress and completion.in_progress_done(
        ctx.plan.paths, ctx.plan.feature_filter
    ):
        return ("in-progress", "no_in_progress", None)
    return None


def count(ctx: RunContext, attempt: Attempt) -> None:
    """Step 14 (EXIT-2, EXIT-4, SUP-60..63): may exit by quit-on-abort or a fatal result."""
    c, s, out = ctx.counters, ctx.settings, attempt.outcome
    c.iterations += 1
    c.add_usage(out.tokens, out.cost_usd)
    if out.outcome is Outcome.SUCCESS:
        c.consecutive_failures = 0
        return
    c.failures += 1
    if not (out.result == ExitCode.TIMEOUT_OR_SIGNAL and s.continue_on_timeout):
        c.consecutive_failures += 1
    if out.outcome is Outcome.FATAL:
        message = f"{out.message or 'the agent CLI cannot work without a human'} ({FATAL_HINT})"
        ctx.say(f"fatal: {message}", level="ERROR")
        raise RunExit(ExitCode.CLI_ERROR, EndReason.FATAL, message)
    if s.quit_on_abort and c.consecutive_failures >= s.quit_on_abort:
        ctx.say(f"{c.consecutive_failures} consecutive failures (--quit-on-abort "
                f"{s.quit_on_abort}); exiting with {out.result}", level="ERROR")
        ctx.events.emit("failure_threshold", failures=c.consecutive_failures, result=out.result)
        raise RunExit(out.result, EndReason.QUIT_ON_ABORT)


def stuck(ctx: RunContext, state: PhaseState, attempt: Attempt) -> bool:
    """Step 17 (SUP-70..72), only without --max-iterations."""
    if ctx.settings.max_iterations is not None or attempt.fingerprint_before is None:
        return False
    from aidd.project.fingerprint import fingerprint

    after = fingerprint(ctx.plan.paths.root)
    ctx.last_fingerprint = after
    same = after == attempt.fingerprint_before
    if not same:
        state.stuck, state.stuck_numbers = 0, ()
    elif attempt.outcome.outcome is Outcome.SUCCESS:
        state.stuck += 1
        state.stuck_numbers = (*state.stuck_numbers, attempt.number)
    if state.stuck < STUCK_LIMIT:
        return False
    ctx.say(f"stopped: {STUCK_LIMIT} consecutive iterations without meaningful changes")
    ctx.events.emit("stuck", iterations=list(state.stuck_numbers))
    return True


def sleep_for_rate_limit(ctx: RunContext, attempt: Attempt) -> None:
    """Step 13 (SUP-50..52): announce, keep the log as NNN.ratelimited.log, sleep, retry."""
    out = attempt.outcome
    now = ctx.clock.now()
    wake = out.wake.at if out.wake else now + timedelta(seconds=ctx.settings.rate_limit_fallback)
    seconds = max(0.0, (wake - now).total_seconds())
    source = out.wake.source.value if out.wake else "fallback"
    ctx.say(f"rate limited; sleeping until {wake.astimezone().strftime('%H:%M:%S')} ({source})",
            level="WARN")
    ctx.events.emit("rate_limit_sleep", number=attempt.number, until=wake.isoformat(),
                    seconds=round(seconds, 3), source=source,
                    message=(out.wake.message[:200] or None) if out.wake else None)
    attempt.close(renamed=".ratelimited.log")
    ctx.counters.rate_limit_sleeps += 1
    start = ctx.clock.monotonic()
    try:
        ctx.wait(seconds)
    finally:
        ctx.counters.paused_s += ctx.clock.monotonic() - start
