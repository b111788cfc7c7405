"""The run loop: phases of iterations, each deciding what comes next (SUP-1..3).

It reads like the flow: check the limit and stop requests, the precheck (completion, mode),
run one attempt, count it, check stop, findings and progress. Endings are values (`RunEnd`,
`PhaseEnd`); exceptions are only errors.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

from aidd.audits.definitions import AuditDefinition
from aidd.clock import Clock
from aidd.console import Console
from aidd.errors import AgentCliError, AiddError, CrashReported, ExitCode, NotFoundError
from aidd.events import EventLog, make_run_id
from aidd.fsio import UnsafePathError
from aidd.gate.runner import run_gate
from aidd.project.completion import evaluate, unfixed_findings
from aidd.prompts.select import Mode
from aidd.run import decisions, leftovers
from aidd.run.auditphase import record_findings, start_phase
from aidd.run.budgeting import BudgetKeeper
from aidd.run.circular import CircularFixes
from aidd.run.gating import Gatekeeper, RunGate
from aidd.run.iteration import Attempt, IterationRunner, RunAttempt
from aidd.run.journal import Journal
from aidd.run.lastattempt import AttemptMemory, summarise, work_of
from aidd.run.lifecycle import Lifecycle
from aidd.run.outcomes import COMPLETED, DONE, Counters, EndReason, RunEnd
from aidd.run.phases import Phase, PhaseEnd, PhaseKind, PhaseState
from aidd.run.preflight import RunPlan
from aidd.session.orphans import sweep_run
from aidd.session.outcome import Outcome
from aidd.session.runner import run_attempt

if TYPE_CHECKING:
    from aidd.run.slots import Slots

REMEDIATION_CAP = 10  # fix-and-re-audit cycles before giving up (AUD-40)


class Supervisor:
    def __init__(self, plan: RunPlan, clock: Clock, attempt: RunAttempt = run_attempt,
                 console: Console | None = None, gate: RunGate = run_gate) -> None:
        self.plan = plan
        self.clock = clock
        events = EventLog(plan.paths.events, make_run_id(plan.started, os.getpid()),
                          root=plan.paths.root, clock=clock)
        self.journal = Journal(console or Console(color=plan.settings.colored), events, clock,
                               plan.paths.root)
        if plan.settings.console == "compact":
            from aidd.run.statusline import StatusLine  # lazy: as slots below

            StatusLine(plan, clock).attach(self.journal)
        self.life = Lifecycle(plan, self.journal, clock)
        self.budget = BudgetKeeper(plan, self.journal, clock)
        self.life.deadline_s = self.budget.deadline_s
        self.counters = Counters()
        self.gates = Gatekeeper(plan, self.journal, clock, self._stopping, gate)
        previous = plan.previous_run
        self.memory = AttemptMemory(previous.for_prompt() if previous is not None else "")
        self.circular = CircularFixes(plan, self.journal)
        self.iterations = IterationRunner(plan, self.journal, self.life.interrupt, clock, attempt,
                                          lambda: self.gates.report, self.budget.deadline_s,
                                          lambda: self.life.files, self.memory.recall,
                                          live=self.life.live, status=self.life.status_file)
        self.fingerprint: str | None = None  # the tree at the last stuck check
        self.slots: Slots | None = None  # --parallel N > 1 (issue 29)
        if plan.worktrees is not None and plan.mode is Mode.DEFAULT:
            # lazy: a plain run needs none of --parallel's modules (worktrees, merges, the
            # schedule, board marks: 14 dataclasses, ~15 ms of a start, issue 33)
            from aidd.run.slots import Shared, Slots

            self.slots = Slots(plan, plan.worktrees, self.journal, clock, attempt, Shared(
                self.life, self.counters, self.budget, self.gates, self.memory, self.circular))

    # -- the run -------------------------------------------------------------------------
    def run(self) -> int:
        """The run's exit code. A fatal CLI error is raised after the shutdown, so `cli`
        prints its one line last (LOG-7, ADP-44)."""
        try:
            end = self._run_to_end()
            code = self.life.finish(end, self.counters)
        finally:
            self.journal.events.close()  # held open for the run (aidd/events)
        match end:
            case RunEnd(reason=EndReason.FATAL, message=message):
                raise AgentCliError(f"fatal: {message}")
            case _:
                return code

    def _run_to_end(self) -> RunEnd:
        """The phases; an error mid-run still takes the one shutdown before it propagates."""
        try:
            self.counters.next_number = self.life.begin()
            self._name_kept(leftovers.at_start(self.plan, self.journal))
            try:
                return self._phases()
            finally:  # the safety net (REL-1), before run_end and the lock's release
                for line in sweep_run(self.plan.settings.environ, self.plan.settings.keep_children,
                                      self.clock):
                    self.journal.say(line, level="WARN")
        except UnsafePathError as exc:  # the agent planted a link where aidd writes
            self.journal.say(f"refused: {exc}", level="ERROR")
            self._fail(ExitCode.NOT_FOUND)
            raise NotFoundError(f"refused to write through {exc}") from None
        except AiddError as exc:  # a known error mid-run, e.g. a template that fails (PRM-13)
            self.journal.say(exc.message, level="ERROR")
            self._fail(exc.exit_code)
            raise
        except Exception as exc:
            log = self.journal.report_crash(exc)
            self._fail(ExitCode.GENERAL_ERROR)
            raise CrashReported(log, f"{type(exc).__name__}: {exc}") from exc

    def _name_kept(self, kept: tuple[str, ...]) -> None:
        """A killed `--parallel` run's unmerged branches, in every header of this run."""
        if kept:
            self.plan = replace(self.plan, kept_branches=kept)
            self.iterations.plan = self.plan
            if self.slots is not None:
                self.slots.plan = self.plan

    def _fail(self, code: int) -> None:
        self.life.finish(RunEnd(int(code), EndReason.ERROR), self.counters)

    def _phases(self) -> RunEnd:
        plan = self.plan
        end = (self._audit_set(plan.audit_queue, PhaseKind.AUDIT) if plan.audit_queue
               else self._main_then_audits())
        if end is None and plan.settings.code_after_audit:
            end = self._remediation()
        return end or (COMPLETED if self.counters.completion_confirmed else DONE)

    def _main_then_audits(self) -> RunEnd | None:
        """The main phase, then the post-completion audits once the project is complete."""
        end = self._phase(Phase(PhaseKind.MAIN))
        if isinstance(end, RunEnd) or not self.plan.post_audits:
            return end if isinstance(end, RunEnd) else None
        if end is not PhaseEnd.COMPLETION_CONFIRMED and not evaluate(
                self.plan.paths, self.plan.feature_filter).complete:
            self.journal.say("project not complete; skipping post-completion audits")
            return None
        return self._audit_set(self.plan.post_audits, PhaseKind.POST_COMPLETION_AUDIT)

    def _audit_set(self, audits: tuple[AuditDefinition, ...], kind: PhaseKind) -> RunEnd | None:
        for index, audit in enumerate(audits, 1):
            if (stop := self.life.stop_requested()) is not None:
                return stop
            if isinstance(end := self._phase(Phase(kind, audit, index, len(audits))), RunEnd):
                return end
        return None

    def _remediation(self) -> RunEnd | None:
        """Fix the findings, audit again; at most REMEDIATION_CAP cycles (AUD-40)."""
        reaudit = self.plan.post_audits or self.plan.audit_queue
        for cycle in range(1, REMEDIATION_CAP + 1):
            unfixed = unfixed_findings(self.plan.paths)
            if unfixed == 0:
                return None
            if (stop := self.life.stop_requested()) is not None:
                return stop
            self.journal.events.emit("remediation_cycle", cycle=cycle, unfixed=unfixed)
            fixed = self._phase(Phase(PhaseKind.REMEDIATION, cycle=cycle))
            end = fixed if isinstance(fixed, RunEnd) else self._audit_set(reaudit, PhaseKind.AUDIT)
            if end is not None:
                return end
        unfixed = unfixed_findings(self.plan.paths)
        if unfixed:
            self.journal.say(f"maximum remediation cycles ({REMEDIATION_CAP}) reached; "
                             f"{unfixed} findings remain", level="WARN")
            self.journal.events.emit("remediation_cap", unfixed=unfixed)
        return None

    # -- one phase -----------------------------------------------------------------------
    def _phase(self, phase: Phase) -> PhaseEnd | RunEnd:
        audit = phase.audit.name if phase.audit else None
        self.journal.events.emit("phase_start", phase=phase.kind.value, audit=audit,
                                 index=phase.index, total=phase.total, cycle=phase.cycle)
        state = start_phase(self.plan, phase)
        end = self._iterate(state)
        if isinstance(end, RunEnd):
            return end
        if end is PhaseEnd.MAX_ITERATIONS:
            self.journal.say(f"{phase.label}: --max-iterations "
                             f"{self.plan.settings.max_iterations} reached")
        self.journal.events.emit("phase_end", phase=phase.kind.value, audit=audit,
                                 reason=end.value, iterations=state.index)
        return end

    def _iterate(self, state: PhaseState) -> PhaseEnd | RunEnd:
        limit = self.plan.settings.max_iterations
        while limit is None or state.index < limit:
            if (stop := self.life.stop_requested()) is not None:
                return stop
            check = decisions.precheck(self.plan, self.journal, self.counters, state,
                                       self.clock.now(), self.gates.holds_completion)
            end, ran = (check.end, 0) if check.end is not None else self._parallel(state)
            if end is not None:
                return self._unless_set_aside(end)
            if ran:
                continue  # slots worked: completion and the next work are decided again
            if (spent := self._budget_and_pace()) is not None:
                return spent
            state.index += 1
            attempt = self._attempt(state, check.completion_review)
            if isinstance(attempt, RunEnd):
                return attempt
            end = self._after(state, attempt)
            self.journal.close_log()
            if end is not None:
                return end
        return PhaseEnd.MAX_ITERATIONS

    def _parallel(self, state: PhaseState) -> tuple[PhaseEnd | RunEnd | None, int]:
        """--parallel N: the features that can be worked at once (run/slots); the single loop
        goes on with the rest (the completion review, what no slot may take)."""
        if self.slots is None or state.phase.kind is not PhaseKind.MAIN:
            return None, 0
        return self.slots.run(state)

    def _attempt(self, state: PhaseState, completion_review: bool) -> Attempt | RunEnd:
        """Run the attempt again after each rate-limit sleep: a limited attempt does not
        count as an iteration (SUP-50)."""
        while True:
            carried, self.fingerprint = self.fingerprint, None
            self.gates.before_attempt(self.counters.next_number)
            self.life.guard.begin()
            attempt = self.iterations.run(state, self.counters.take_number(), completion_review,
                                          carried)
            self._restore_board_edits(attempt.number)
            self.budget.spent(attempt, self.counters)
            if not attempt.rate_limited:
                return attempt
            end = (decisions.sleep_for_rate_limit(self.plan, self.journal, self.life,
                                                  self.counters, attempt)
                   or self._budget_and_pace())
            if end is not None:
                return end

    def _restore_board_edits(self, number: int) -> None:
        for done in self.life.guard.restore():
            self.journal.say(f"attempt {number:03d} wrote over a board edit of {done.name}: "
                             f"restored {', '.join(done.keys)}", level="WARN")
            self.journal.events.emit("feature_restored", number=number, feature=done.name,
                                     keys=list(done.keys))

    def _budget_and_pace(self) -> RunEnd | None:
        """Before an attempt: the budgets; then --pace-at may pause until a quota window
        resets, and the budgets are checked again (the pause took wall time)."""
        end = self.budget.check(self.counters)
        if end is None and (due := self.budget.pace_due()) is not None:
            end = (decisions.pace(self.plan, self.journal, self.life, self.counters, *due)
                   or self.budget.check(self.counters))
        return end

    def _after(self, state: PhaseState, attempt: Attempt) -> PhaseEnd | RunEnd | None:
        end = (decisions.count(self.plan.settings, self.journal, self.counters, attempt)
               or self.life.stop_requested())
        if end is not None:
            return end
        record_findings(self.plan, self.journal, state)
        stuck, self.fingerprint = decisions.stuck(self.plan, self.journal, state, attempt)
        if self.gates.after_attempt(attempt.number, attempt.outcome.outcome is Outcome.SUCCESS):
            self.fingerprint = None  # the gate may have written files: not the agent's change
        paths, failures = self.plan.paths, self.gates.new_failures(attempt.number)
        self.memory.remember(work_of(state.phase, attempt.selection.kind), attempt.feature,
                             summarise(attempt, failures, paths.root, paths.log(attempt.number)))
        if self.circular.after(attempt, failures):
            self.memory.set_aside = self.circular.lines()
        return PhaseEnd.STUCK if stuck else None

    def _unless_set_aside(self, end: PhaseEnd | RunEnd) -> PhaseEnd | RunEnd:
        """Nothing workable left, with features this run set aside: the run ends, saying so
        (the health verdict is failed), instead of ending the phase as if all were in review."""
        if end is not PhaseEnd.AWAITING_REVIEW or not self.circular.set_aside:
            return end
        names = ", ".join(self.circular.set_aside)
        message = (f"nothing workable is left but the features set aside after repeated "
                   f"endings: {names}")
        self.journal.say(message, level="WARN")
        return RunEnd(ExitCode.SUCCESS, EndReason.SET_ASIDE, message)

    def _stopping(self) -> bool:
        """A signal or a `.stop`: a gate command in flight is cut short."""
        return self.life.interrupt.is_set() or os.path.lexists(self.plan.paths.stop)
