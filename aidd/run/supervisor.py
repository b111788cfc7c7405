"""The run loop: phases of iterations, each deciding what comes next (supervision.md SUP-1..3).

It reads like the flow: check limits and stop, check completion and mode, run one attempt,
count it, check stop, findings and progress. Attempts themselves live in `iteration.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aidd.audits.definitions import AuditDefinition
from aidd.clock import Clock
from aidd.errors import AgentCliError, AiddError, CrashReported, ExitCode, NotFoundError
from aidd.fsio import UnsafePathError
from aidd.prompts.context import InvalidFinding
from aidd.run import decisions as policy
from aidd.run.context import RunContext
from aidd.run.iteration import Attempt, IterationRunner
from aidd.run.outcomes import EndReason, PhaseEnd, PhaseKind, RunExit
from aidd.run.preflight import RunPlan
from aidd.session.orphans import sweep_run

REMEDIATION_CAP = 10


@dataclass(frozen=True)
class Phase:
    kind: PhaseKind
    audit: AuditDefinition | None = None
    index: int = 1
    total: int = 1
    cycle: int | None = None

    @property
    def label(self) -> str:
        name = self.audit.name if self.audit else ""
        match self.kind:
            case PhaseKind.MAIN:
                return "main"
            case PhaseKind.AUDIT if self.total == 1:
                return f"audit: {name}"
            case PhaseKind.AUDIT:
                return f"audit {self.index} of {self.total}: {name}"
            case PhaseKind.POST_COMPLETION_AUDIT:
                return f"post-completion audit {self.index} of {self.total}: {name}"
            case PhaseKind.REMEDIATION:
                return f"remediation cycle {self.cycle}"


class Supervisor:
    def __init__(self, plan: RunPlan, clock: Clock) -> None:
        self.ctx = RunContext.open(plan, clock)
        self.iterations = IterationRunner(self.ctx)

    # -- the run -------------------------------------------------------------------------
    def run(self) -> int:
        ctx = self.ctx
        code, reason, fatal = int(ExitCode.SUCCESS), EndReason.DONE, ""
        try:
            ctx.begin()
            try:
                self._phases()
            finally:  # REL-1: the run's safety net, before run_end and the lock's release
                for line in sweep_run(ctx.settings.environ, ctx.settings.keep_children, ctx.clock):
                    ctx.say(line, level="WARN")
            if ctx.counters.completion_confirmed:
                code, reason = int(ExitCode.PROJECT_COMPLETE), EndReason.COMPLETED
        except RunExit as exit_:
            code, reason = exit_.code, exit_.reason
            fatal = exit_.message if reason is EndReason.FATAL else ""
        except UnsafePathError as exc:  # the agent planted a link where aidd writes (issue 13)
            ctx.say(f"refused: {exc}", level="ERROR")
            ctx.finish(int(ExitCode.NOT_FOUND), EndReason.ERROR)
            raise NotFoundError(f"refused to write through {exc}") from None
        except AiddError as exc:  # a known error mid-run, e.g. a template that fails (PRM-13)
            ctx.say(exc.message, level="ERROR")
            ctx.finish(int(exc.exit_code), EndReason.ERROR)
            raise
        except Exception as exc:
            log = ctx.report_crash(exc)
            ctx.finish(int(ExitCode.GENERAL_ERROR), EndReason.ERROR)
            raise CrashReported(log, f"{type(exc).__name__}: {exc}") from exc
        ctx.finish(code, reason)
        if fatal:  # LOG-7, ADP-44: after the shutdown, one line on stderr (`cli.main`), exit 8
            raise AgentCliError(f"fatal: {fatal}")
        return code

    def _phases(self) -> None:
        plan = self.ctx.plan
        if plan.audit_queue:
            self._audit_set(plan.audit_queue, PhaseKind.AUDIT)
        else:
            end = self._phase(Phase(PhaseKind.MAIN))
            self._post_completion(end)
        if plan.settings.code_after_audit:
            self._remediation()

    def _post_completion(self, end: PhaseEnd) -> None:
        plan = self.ctx.plan
        if not plan.post_audits:
            return
        if end is not PhaseEnd.COMPLETION_CONFIRMED and not self.ctx.project_complete():
            self.ctx.say("project not complete; skipping post-completion audits")
            return
        self._audit_set(plan.post_audits, PhaseKind.POST_COMPLETION_AUDIT)

    def _audit_set(self, audits: tuple[AuditDefinition, ...], kind: PhaseKind) -> None:
        for index, audit in enumerate(audits, 1):
            self.ctx.check_between_phases()
            self._phase(Phase(kind, audit, index, len(audits)))

    def _remediation(self) -> None:
        plan = self.ctx.plan
        reaudit = plan.post_audits or plan.audit_queue
        for cycle in range(1, REMEDIATION_CAP + 1):
            unfixed = self.ctx.unfixed_findings()
            if unfixed == 0:
                return
            self.ctx.check_between_phases()
            self.ctx.events.emit("remediation_cycle", cycle=cycle, unfixed=unfixed)
            self._phase(Phase(PhaseKind.REMEDIATION, cycle=cycle))
            self._audit_set(reaudit, PhaseKind.AUDIT)
        unfixed = self.ctx.unfixed_findings()
        if unfixed:
            self.ctx.say(f"maximum remediation cycles ({REMEDIATION_CAP}) reached; "
                         f"{unfixed} findings remain", level="WARN")
            self.ctx.events.emit("remediation_cap", unfixed=unfixed)

    # -- one phase -----------------------------------------------------------------------
    def _phase(self, phase: Phase) -> PhaseEnd:
        ctx = self.ctx
        ctx.events.emit("phase_start", phase=phase.kind.value,
                        audit=phase.audit.name if phase.audit else None, index=phase.index,
                        total=phase.total, cycle=phase.cycle)
        state = PhaseState(phase, ctx.reports_snapshot(phase), ctx.findings_snapshot(phase))
        end = self._iterate(phase, state)
        if end is PhaseEnd.MAX_ITERATIONS:
            ctx.say(f"{phase.label}: --max-iterations {ctx.settings.max_iterations} reached")
        ctx.events.emit("phase_end", phase=phase.kind.value,
                        audit=phase.audit.name if phase.audit else None, reason=end.value,
                        iterations=state.index)
        return end

    def _iterate(self, phase: Phase, state: PhaseState) -> PhaseEnd:
        ctx = self.ctx
        limit = ctx.plan.settings.max_iterations
        while True:
            if limit is not None and state.index >= limit:
                return PhaseEnd.MAX_ITERATIONS
            ctx.check_stop()
            gate = policy.gate(ctx, phase, state)  # completion, findings, mode done
            if gate.end is not None:
                return gate.end
            state.index += 1
            attempt = self._attempt_until_not_rate_limited(phase, state, gate.completion_review)
            with attempt:
                policy.count(ctx, attempt)  # may exit: quit-on-abort, fatal
                ctx.check_stop()
                if phase.audit is not None:
                    ctx.record_findings(phase, state)
                if policy.stuck(ctx, state, attempt):
                    return PhaseEnd.STUCK

    def _attempt_until_not_rate_limited(self, phase: Phase, state: PhaseState,
                                        completion_review: bool) -> Attempt:
        while True:
            attempt = self.iterations.run(phase, state, completion_review)
            if not attempt.rate_limited:
                return attempt
            with attempt:
                policy.sleep_for_rate_limit(self.ctx, attempt)


@dataclass
class PhaseState:
    """Per-phase counters (SUP-60, SUP-72)."""

    phase: Phase
    reports_before: dict[str, tuple[int, int]]  # report (mtime_ns, size) at phase start, AUD-22
    findings_before: dict[str, int] = field(default_factory=dict)
    index: int = 0
    stuck: int = 0
    stuck_numbers: tuple[int, ...] = ()
    invalid_findings: tuple[InvalidFinding, ...] = ()


