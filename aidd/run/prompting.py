"""One attempt's template context (PRM-20), made from the run's plan and the phase's state."""

from __future__ import annotations

from datetime import datetime

from aidd import __version__
from aidd.audits.definitions import audit_info, severity_reference
from aidd.project.filters import FeatureFilter
from aidd.project.paths import ProjectPaths
from aidd.prompts import context as pc
from aidd.prompts.select import Selection
from aidd.run.phases import Phase, PhaseState
from aidd.run.preflight import RunPlan


def build_context(plan: RunPlan, phase: Phase, state: PhaseState, number: int,
                  selection: Selection, now: datetime, gate_report: str,
                  last_attempt: pc.LastAttemptInfo,
                  tree: ProjectPaths | None = None,
                  parallel: pc.ParallelInfo | None = None) -> pc.PromptContext:
    """`tree`: where the agent works (a slot's worktree), by default the project."""
    s, paths = plan.settings, tree or plan.paths
    audit = pc.AuditInfo()
    severity = ""
    if phase.audit is not None:
        audit = audit_info(phase.audit, paths, now, state.invalid_findings)
        severity = severity_reference(paths)
    return pc.PromptContext(
        aidd_version=__version__,
        project=pc.ProjectInfo(str(paths.root), plan.paths.root.name),
        cli=pc.CliInfo(plan.adapter.name, plan.adapter.display_name),
        kind=selection.kind,
        paths=pc.PromptPaths.from_project(paths),
        now=pc.TimeInfo.from_datetime(now),
        iteration=pc.IterationInfo(number, state.index, s.max_iterations or 0),
        phase=pc.PhaseInfo(phase.kind.title, phase.cycle or 0),
        filters=filter_info(plan.feature_filter, s.feature),
        directive=s.prompt or "",
        user_spec=s.spec is not None,
        completion_review=selection.completion_review,
        remediation=selection.remediation,
        audit=audit,
        severity=severity,
        gate=pc.GateInfo(bool(gate_report), gate_report),
        last_attempt=last_attempt,
        parallel=parallel or pc.ParallelInfo(),
    )


def filter_info(filters: FeatureFilter | None, feature_value: str | None) -> pc.FilterInfo:
    if filters is None:
        return pc.FilterInfo()
    milestone = field = focus = None
    if filters.milestone is not None:
        m = filters.milestone
        milestone = pc.MilestoneFilter(m.name, m.description, tuple(sorted(m.dirs)))
    if filters.focus is not None:
        focus = pc.FeatureFocus(filters.focus.dir_name, feature_value or filters.focus.dir_name)
    if filters.field is not None:
        field = pc.FieldFilter(filters.field.field, filters.field.text)
    return pc.FilterInfo(milestone=milestone, feature=focus, field=field)
