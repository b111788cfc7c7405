"""The decisions around each attempt: the precheck before it (completion, findings, a mode that is
done), and after it the count (failures, quit-on-abort, a fatal CLI error), stuck detection and
the pauses: the rate-limit sleep and pacing (SUP-3, SUP-50..72, EXIT-2..4)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import NamedTuple

from aidd.agents.ratelimit import QuotaWindow
from aidd.config import Settings
from aidd.errors import ExitCode
from aidd.numbers import epoch_s, shown
from aidd.project.completion import (
    CompletionOutcome,
    CompletionState,
    FeatureVerdict,
    completion_step,
    evaluate,
    in_progress_done,
    todo_mode_done,
    unfixed_findings,
)
from aidd.project.fingerprint import fingerprint
from aidd.prompts.select import Mode
from aidd.run.auditphase import finished_report
from aidd.run.iteration import Attempt
from aidd.run.journal import Journal
from aidd.run.lifecycle import Lifecycle
from aidd.run.outcomes import COMPLETED, Counters, EndReason, RunEnd, format_duration
from aidd.run.phases import PhaseEnd, PhaseKind, PhaseState
from aidd.run.preflight import RunPlan
from aidd.session.outcome import Outcome, Reason

# Iterations in a row that succeed, or do no work (75), without changing the tree (SUP-70).
STUCK_LIMIT = 3
# The one line of a fatal end names the cause (the CLI's own words) and what to do: fatal
# causes are authentication (401/403, login), billing, or permissions (ADP-44).
FATAL_HINT = "fix the agent CLI's authentication, billing or permissions, then run aidd again"


class Precheck(NamedTuple):
    end: PhaseEnd | RunEnd | None = None  # None: run the attempt
    completion_review: bool = False  # this attempt reviews a project that looks complete


def precheck(plan: RunPlan, journal: Journal, counters: Counters, state: PhaseState,
         now: datetime, hold: Callable[[], bool] = lambda: False) -> Precheck:
    """Before an attempt: the project may be complete (a review first, then exit 73; `hold`
    may refuse it: the validation gate), the remediation may have nothing left to fix, or the
    mode may have run out of work."""
    kind = state.phase.kind
    if kind is PhaseKind.MAIN and plan.mode is not Mode.DIRECTIVE:
        review = _completion(plan, journal, counters, now, hold)
        if review is not None:
            return review
    if kind is PhaseKind.REMEDIATION and unfixed_findings(plan.paths) == 0:
        journal.say("no unfixed findings left")
        return Precheck(PhaseEnd.FINDINGS_FIXED)
    if kind is PhaseKind.MAIN and plan.post_audits and counters.completion_confirmed:
        return Precheck(PhaseEnd.COMPLETION_CONFIRMED)
    done = _mode_done(plan, state)
    if done is None:
        return Precheck()
    name, reason, report = done
    journal.say(f"{name} mode done ({reason.replace('_', ' ')}); ending the phase")
    journal.events.emit("mode_done", kind=name, reason=reason, report=report)
    return Precheck(PhaseEnd.MODE_DONE)


def _completion(plan: RunPlan, journal: Journal, counters: Counters, now: datetime,
                hold: Callable[[], bool]) -> Precheck | None:
    """Completion in two steps (CMP-10): the first time everything passes, one more attempt
    reviews the project; when it still passes after that, the project is complete."""
    if _review_again(plan, counters):
        journal.say("the completion review did no work (result 75): completion not confirmed, "
                    "reviewing again")
        return Precheck(completion_review=True)
    verdict = completion_step(plan.paths, plan.feature_filter, now, hold)
    state = verdict.state
    if verdict.event_state is not None:
        journal.events.emit("completion", state=verdict.event_state, features=state.counted,
                     failing=len(state.failing), blocking_todos=len(state.blocking_todos))
    if verdict.outcome is CompletionOutcome.PENDING:
        journal.say("all features pass and no TODO blocks: completion pending, running a review")
        return Precheck(completion_review=True)
    if not verdict.confirmed:
        return _awaiting_review(journal, verdict.state)
    if verdict.outcome is CompletionOutcome.ALREADY_COMPLETED:
        journal.say("project already completed")
    journal.say("project completion confirmed")
    counters.completion_confirmed = True
    if plan.post_audits:
        return None  # the main phase ends next; the post-completion audits follow (AUD-30)
    return Precheck(COMPLETED)


def _awaiting_review(journal: Journal, state: CompletionState) -> Precheck | None:
    """Nothing unfinished is workable (issues 18, 31): every such feature waits for a person
    (`waiting_approval`, `failed`), another tool (`running`, `pipeline_*`) or a dependency, and
    no TODO line is open: another attempt could only find nothing to do, all night."""
    if not state.failing or state.blocking_todos or any(f.workable for f in state.failing):
        return None
    waiting = len(state.failing)
    if all(f.verdict is FeatureVerdict.REVIEW for f in state.failing):
        journal.say(f"every unfinished feature ({waiting}) waits for a human review "
                    "(waiting_approval): nothing left for the agent; ending the phase")
    else:
        journal.say(f"no unfinished feature ({waiting}) is workable: each waits for a person "
                    "(waiting_approval, failed), another tool (running, pipeline_*) or a "
                    "dependency; nothing left for the agent; ending the phase")
    return Precheck(PhaseEnd.AWAITING_REVIEW)


def _review_again(plan: RunPlan, counters: Counters) -> bool:
    """A review that did no work confirms nothing: while the project is still complete and
    pending, the review runs again (issue 15). Otherwise the usual check decides."""
    return (counters.review_did_no_work and plan.paths.completion_pending.exists()
            and evaluate(plan.paths, plan.feature_filter).complete)


def _mode_done(plan: RunPlan, state: PhaseState) -> tuple[str, str, str | None] | None:
    """(mode, why, report) when the phase's work is done; audits end with their report."""
    if state.phase.kind.audits:
        report = finished_report(plan, state)
        return ("audit", "audit_report", report) if report else None
    if state.phase.kind is not PhaseKind.MAIN or not plan.settings.stop_when_done:
        return None
    if plan.mode is Mode.TODO and todo_mode_done(plan.paths):
        return ("todo", "no_actionable_todo", None)
    if plan.mode is Mode.IN_PROGRESS and in_progress_done(plan.paths, plan.feature_filter):
        return ("in-progress", "no_in_progress", None)
    return None


def count(settings: Settings, journal: Journal, counters: Counters,
          attempt: Attempt) -> RunEnd | None:
    """Count the attempt; a fatal CLI error ends the run with 8, and --quit-on-abort N ends it
    after N failures in a row (EXIT-2, EXIT-4, SUP-60..63). An attempt aidd stopped at the
    run's --max-wall-time is no failure of the agent: the budget check ends the run next."""
    out = attempt.outcome
    counters.iterations += 1
    counters.review_did_no_work = (attempt.selection.completion_review
                                   and out.reason is Reason.NO_WORK)
    if out.reason is Reason.BUDGET:
        return None
    match out.outcome:
        case Outcome.SUCCESS:
            counters.consecutive_failures = 0
            return None
        case Outcome.FATAL:
            counters.failures += 1
            counters.consecutive_failures += 1
            cause = out.message or "the agent CLI cannot work without a human"
            journal.say(f"fatal: {cause} ({FATAL_HINT})", level="ERROR")
            return RunEnd(ExitCode.CLI_ERROR, EndReason.FATAL, f"{cause} ({FATAL_HINT})")
    counters.failures += 1
    if not (out.result == ExitCode.TIMEOUT_OR_SIGNAL and settings.continue_on_timeout):
        counters.consecutive_failures += 1
    failures, limit = counters.consecutive_failures, settings.quit_on_abort
    if not limit or failures < limit:
        return None
    journal.say(f"{failures} consecutive failures (--quit-on-abort {limit}); exiting with "
                f"{out.result}", level="ERROR")
    journal.events.emit("failure_threshold", failures=failures, result=out.result)
    return RunEnd(out.result, EndReason.QUIT_ON_ABORT)


def stuck(plan: RunPlan, journal: Journal, state: PhaseState,
          attempt: Attempt) -> tuple[bool, str | None]:
    """Three successful or no-work attempts in a row that changed nothing end the phase
    (SUP-70..72); only without --max-iterations. Returns the verdict and the tree's
    fingerprint now (None: the attempt's checkpoints told, project/checkpoints `moved`)."""
    if plan.settings.max_iterations is not None:
        return False, None
    after = None
    if attempt.moved is None:
        if attempt.fingerprint_before is None:
            return False, None
        after = fingerprint(plan.paths.root, plan.settings.environ)
    if attempt.moved or (attempt.moved is None and after != attempt.fingerprint_before):
        state.stuck, state.stuck_numbers = 0, ()
    elif attempt.outcome.outcome is Outcome.SUCCESS or attempt.outcome.reason is Reason.NO_WORK:
        state.stuck += 1
        state.stuck_numbers = (*state.stuck_numbers, attempt.number)
    if state.stuck < STUCK_LIMIT:
        return False, after
    journal.say(f"stopped: {STUCK_LIMIT} consecutive iterations without meaningful changes")
    journal.events.emit("stuck", iterations=list(state.stuck_numbers))
    return True, after


def sleep_for_rate_limit(plan: RunPlan, journal: Journal, life: Lifecycle, counters: Counters,
                         attempt: Attempt) -> RunEnd | None:
    """Say until when, keep the log as NNN.ratelimited.log, sleep (a signal or `.stop` ends
    the sleep and the run), then the same iteration runs again (SUP-50..52). Never longer
    than --rate-limit-max-sleep, whatever reset the CLI reported (issue 27)."""
    wake, clock = attempt.outcome.wake, life.clock
    # A rate-limited outcome always carries its wake time, the fallback included (SUP-51).
    assert wake is not None, "a rate-limited outcome without a wake time"
    if wake.notes:
        journal.warn("rate limit: " + "; ".join(wake.notes))
    wait = _capped(plan.settings, wake.at, clock.now())
    journal.say(f"rate limited; sleeping until {wait.until.astimezone().strftime('%H:%M:%S')} "
                f"({wake.source.value}{wait.words(plan.settings)})", level="WARN")
    journal.events.emit("rate_limit_sleep", number=attempt.number,
                        until=wait.until.isoformat(), seconds=round(wait.seconds, 3),
                        source=wake.source.value, message=wake.message[:200] or None,
                        capped_from=wait.capped_from_iso)
    journal.close_log(renamed=".ratelimited.log")
    counters.rate_limit_sleeps += 1
    return pause(life, counters, wait.seconds)


def pace(plan: RunPlan, journal: Journal, life: Lifecycle, counters: Counters, number: int,
         window: QuotaWindow) -> RunEnd | None:
    """--pace-at: attempt `number` reported `window` used past the mark; pause until it resets
    (plus --rate-limit-buffer), exactly as a rate-limit sleep pauses, capped alike."""
    now, percent = life.clock.now(), window.utilization * 100
    stamp = epoch_s(window.resets_at)
    if stamp is None:
        journal.warn(f"pacing: the {window.name} quota window's reset "
                     f"{shown(window.resets_at)} is not a time; not pausing")
        return None
    reset = datetime.fromtimestamp(stamp, now.tzinfo)
    wait = _capped(plan.settings, reset + timedelta(seconds=plan.settings.rate_limit_buffer), now)
    journal.say(f"pacing: the {window.name} quota window is {percent:.0f}% used (--pace-at "
                f"{plan.settings.pace_at}); pausing until "
                f"{wait.until.astimezone().strftime('%H:%M:%S')}{wait.words(plan.settings)}",
                level="WARN")
    journal.events.emit("pace", number=number, utilization=round(percent, 1),
                        window=window.name, until=wait.until.isoformat(),
                        seconds=round(wait.seconds, 3), capped_from=wait.capped_from_iso)
    return pause(life, counters, wait.seconds)


class _Wait(NamedTuple):
    until: datetime
    seconds: float
    capped_from: datetime | None  # the wake the reset asked for, when the cap cut it

    @property
    def capped_from_iso(self) -> str | None:
        return None if self.capped_from is None else self.capped_from.isoformat()

    def words(self, settings: Settings) -> str:
        if self.capped_from is None:
            return ""
        return (f"; the reset asks for {self.capped_from.astimezone():%Y-%m-%d %H:%M}, cut to "
                f"--rate-limit-max-sleep {format_duration(settings.rate_limit_max_sleep)}")


def _capped(settings: Settings, until: datetime, now: datetime) -> _Wait:
    """The wait until `until`, at most --rate-limit-max-sleep: a forged reset in 2100 would
    otherwise sleep for 73 years."""
    seconds, cap = max(0.0, (until - now).total_seconds()), settings.rate_limit_max_sleep
    if seconds <= cap:
        return _Wait(until, seconds, None)
    return _Wait(now + timedelta(seconds=cap), float(cap), until)


def pause(life: Lifecycle, counters: Counters, seconds: float) -> RunEnd | None:
    """Sleep, counted as paused; a signal or `.stop` ends the sleep and the run (SUP-52)."""
    start = life.clock.monotonic()
    try:
        return life.wait(seconds)
    finally:
        counters.paused_s += life.clock.monotonic() - start
