"""What an audit phase looks at: the reports and findings there when it started, the findings
each attempt wrote, and whether the audit's report is done (AUD-22, AUD-23)."""

from __future__ import annotations

from aidd.audits.definitions import report_snapshot, report_written
from aidd.audits.findings import check_findings, snapshot
from aidd.run.journal import Journal
from aidd.run.phases import Phase, PhaseState
from aidd.run.preflight import RunPlan


def start_phase(plan: RunPlan, phase: Phase) -> PhaseState:
    """A fresh state; an audit phase remembers what was already there, so only what it writes
    counts as its work."""
    if phase.audit is None:
        return PhaseState(phase)
    return PhaseState(phase, report_snapshot(plan.paths),
                      snapshot(plan.paths, phase.audit.finding_prefix))


def record_findings(plan: RunPlan, journal: Journal, state: PhaseState) -> None:
    """After an audit attempt: count new, changed and invalid findings; the invalid ones are
    shown to the next attempt, which must fix them."""
    audit = state.phase.audit
    if audit is None:
        return
    report = check_findings(plan.paths, audit.name, audit.finding_prefix, state.findings_before)
    state.invalid_findings = report.invalid
    journal.say(f"{report.new} new findings, {report.changed} changed, "
                f"{len(report.invalid)} invalid", level="WARN" if report.invalid else "")
    for finding in report.invalid:
        journal.say(f"invalid finding {finding.path}: " + "; ".join(finding.errors), "WARN")
    journal.events.emit("audit_findings", audit=audit.name, new=report.new, changed=report.changed,
                 invalid=[{"path": f.path, "errors": list(f.errors)} for f in report.invalid])


def finished_report(plan: RunPlan, state: PhaseState) -> str | None:
    """The audit is done once this phase wrote its report and no finding is invalid; the
    report's project-relative path, else None."""
    audit = state.phase.audit
    if audit is None or state.invalid_findings:
        return None
    report = report_written(plan.paths, audit.name, state.reports_before)
    return plan.paths.rel(report) if report is not None else None
