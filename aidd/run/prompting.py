"""The run's facts turned into the template context of PRM-20 for one attempt."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aidd import __version__
from aidd.project.filters import FeatureFilter
from aidd.prompts import context as pc
from aidd.prompts.select import Selection
from aidd.run.outcomes import PhaseKind

if TYPE_CHECKING:
    from aidd.run.context import RunContext
    from aidd.run.supervisor import Phase, PhaseState


def build_context(ctx: RunContext, phase: Phase, state: PhaseState, number: int,
                  selection: Selection) -> pc.PromptContext:
    s, paths = ctx.settings, ctx.plan.paths
    now = ctx.clock.now()
    audit = pc.AuditInfo()
    severity = ""
    if phase.audit is not None:
        from aidd.audits.definitions import AuditDefinition, audit_info, severity_reference

        assert isinstance(phase.audit, AuditDefinition)
        audit = audit_info(phase.audit, paths, now, state.invalid_findings)
        severity = severity_reference(paths)
    return pc.PromptContext(
        aidd_version=__version__,
        project=pc.ProjectInfo(str(paths.root), paths.root.name),
        cli=pc.CliInfo.for_cli(s.cli),
        kind=selection.kind,
        paths=pc.PromptPaths.from_project(paths),
        now=pc.TimeInfo.from_datetime(now),
        iteration=pc.IterationInfo(number, state.index, s.max_iterations or 0),
        phase=pc.PhaseInfo(_phase_name(phase), phase.cycle or 0),
        filters=filter_info(ctx.plan.feature_filter, s.feature),
        directive=s.prompt or "",
        completion_review=selection.completion_review,
        remediation=selection.remediation,
        audit=audit,
        severity=severity,
    )


def _phase_name(phase: Phase) -> str:
    return {
        PhaseKind.MAIN: "main",
        PhaseKind.AUDIT: "audit",
        PhaseKind.POST_COMPLETION_AUDIT: "post-completion audit",
        PhaseKind.REMEDIATION: "remediation",
    }[phase.kind]


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
