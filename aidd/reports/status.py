"""The status report (FEA-30..35): counts, categories, findings, TODOs, markers, run state.

Built once into a `StatusReport`, then rendered as text (`--status`, status.md) or JSON.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aidd.console import print_out
from aidd.errors import ExitCode, NotFoundError
from aidd.project.featurerules import FeatureStatus
from aidd.project.features import Feature, is_unfixed, load_features
from aidd.project.filters import FeatureFilter, counted_features
from aidd.project.markers import MarkerState, read_markers
from aidd.project.paths import ProjectPaths
from aidd.project.todo import TodoSummary, find_todo_file, read_todo, searched_names
from aidd.reports.running import RunState, read_run_state
from aidd.reports.statustext import render

if TYPE_CHECKING:
    from aidd.project.filters import FeatureFilter

SCHEMA_VERSION = 1
NO_CATEGORY = "(none)"
PRIORITY_COLUMNS = ("critical", "high", "medium", "low", "other")


@dataclass(frozen=True)
class FeatureCounts:
    total: int = 0
    passing: int = 0
    failing: int = 0
    in_progress: int = 0
    waiting_approval: int = 0
    open: int = 0
    closed: int = 0
    invalid: int = 0

    @property
    def complete_pct(self) -> int:
        return self.passing * 100 // self.total if self.total else 0


@dataclass(frozen=True)
class CategoryRow:
    name: str
    total: int
    priority: tuple[int, int, int, int, int]  # critical, high, medium, low, other


@dataclass(frozen=True)
class TodoReport:
    file: str | None  # project-relative; None when no TODO file exists
    summary: TodoSummary | None
    searched: tuple[str, ...]


@dataclass(frozen=True)
class StatusReport:
    project_dir: Path
    generated_at: datetime
    filters: FeatureFilter | None
    features_dir: bool
    counts: FeatureCounts
    categories: tuple[CategoryRow, ...]
    findings_total: int
    findings_unfixed: int
    todo: TodoReport
    markers: MarkerState
    run: RunState
    notes: tuple[str, ...] = field(default=())

    @property
    def project_name(self) -> str:
        return self.project_dir.name


def build_status(
    paths: ProjectPaths,
    filters: FeatureFilter | None,
    now: datetime,
    *,
    require_features: bool = False,
) -> StatusReport:
    """Read everything the report shows. `require_features`: `--status` exits 3 (FEA-34)
    without `features/`; before an agent start a missing one gives zeros and a note."""
    exists = paths.features.is_dir()
    if require_features and not exists:
        raise NotFoundError(f"{paths.rel(paths.features)} does not exist")
    files = load_features(paths, validate=False) if exists else []
    counted = counted_features(files, filters)
    valid = [f.feature for f in counted if f.feature is not None]
    findings = [f for f in files if f.is_finding]
    return StatusReport(
        project_dir=paths.root.absolute(),
        generated_at=now,
        filters=filters if filters is not None and filters.active else None,
        features_dir=exists,
        counts=count_features(valid, len(counted) - len(valid)),
        categories=category_rows(valid),
        findings_total=len(findings),
        findings_unfixed=sum(1 for f in findings if is_unfixed(f)),
        todo=_todo_report(paths),
        markers=read_markers(paths),
        run=read_run_state(paths, now),
        notes=() if exists else (f"{paths.rel(paths.features)} does not exist yet",),
    )


def count_features(valid: list[Feature], invalid: int) -> FeatureCounts:
    """FEA-31 over the counted features that pass the structural check."""
    statuses = Counter(f.status for f in valid)
    passing = sum(1 for f in valid if f.passes)
    waiting_failing = sum(
        1 for f in valid if not f.passes and f.status is FeatureStatus.WAITING_APPROVAL
    )
    return FeatureCounts(
        total=len(valid),
        passing=passing,
        failing=len(valid) - passing - waiting_failing,
        in_progress=statuses[FeatureStatus.IN_PROGRESS],
        waiting_approval=statuses[FeatureStatus.WAITING_APPROVAL],
        open=statuses[FeatureStatus.BACKLOG] + statuses[None],
        closed=statuses[FeatureStatus.COMPLETED],
        invalid=invalid,
    )


def category_rows(valid: list[Feature]) -> tuple[CategoryRow, ...]:
    """FEA-32: every category, by count descending then name; priority 1-4, else Other."""
    table: dict[str, list[int]] = {}
    for feature in valid:
        row = table.setdefault(feature.category or NO_CATEGORY, [0, 0, 0, 0, 0])
        row[_priority_column(feature.priority)] += 1
    rows = [CategoryRow(name, sum(c), (c[0], c[1], c[2], c[3], c[4])) for name, c in table.items()]
    return tuple(sorted(rows, key=lambda r: (-r.total, r.name)))


def _priority_column(priority: float | None) -> int:
    if priority is not None and priority in (1, 2, 3, 4):
        return int(priority) - 1
    return 4


def _todo_report(paths: ProjectPaths) -> TodoReport:
    found = find_todo_file(paths)
    summary = read_todo(paths.root, found) if found is not None else None
    rel = paths.rel(found) if found is not None and summary is not None else None
    return TodoReport(rel, summary, searched_names(paths))


def write_status(paths: ProjectPaths, text: str) -> None:
    """`.automaker/status.md`, atomically (FEA-30, LAY-12)."""
    from aidd.fsio import write_atomic  # lazy: tempfile costs ~3 ms of `--status` start-up

    write_atomic(paths.status, text, root=paths.root)


def status_json(report: StatusReport) -> dict[str, Any]:
    """The FEA-35 object; keys are never removed within a schema version."""
    counts = report.counts
    return {
        "schema": SCHEMA_VERSION,
        "generated_at": report.generated_at.isoformat(timespec="seconds"),
        "project": {"dir": str(report.project_dir), "name": report.project_name},
        "filters": report.filters.to_json() if report.filters is not None else None,
        "features": {
            "total": counts.total,
            "passing": counts.passing,
            "failing": counts.failing,
            "in_progress": counts.in_progress,
            "waiting_approval": counts.waiting_approval,
            "open": counts.open,
            "closed": counts.closed,
            "invalid": counts.invalid,
            "complete_pct": counts.complete_pct,
        },
        "categories": [
            {
                "name": r.name,
                "total": r.total,
                "priority": dict(zip(PRIORITY_COLUMNS, r.priority, strict=True)),
            }
            for r in report.categories
        ],
        "findings": {"total": report.findings_total, "unfixed": report.findings_unfixed},
        "todo": _todo_json(report.todo),
        "completion": {
            "pending_since": report.markers.pending_since,
            "completed_at": report.markers.completed_at,
        },
        "run": _run_json(report.run),
    }


def _todo_json(todo: TodoReport) -> dict[str, Any]:
    s = todo.summary or TodoSummary()
    return {
        "file": todo.file,
        "total": s.total,
        "completed": len(s.done),
        "incomplete": len(s.actionable),
        "deferred": len(s.deferred),
        "markers": len(s.markers),
        "complete_pct": s.complete_pct,
        "items": {
            "incomplete": list(s.actionable),
            "deferred": list(s.deferred),
            "completed": list(s.done),
        },
    }


def _run_json(run: RunState) -> dict[str, Any]:
    last = run.last_iteration
    return {
        "running": run.running,
        "pid": run.pid,
        "started_at": run.started_at,
        "paused_until": run.paused_until,
        "last_iteration": None
        if last is None
        else {
            "number": last.number,
            "result": last.result,
            "outcome": last.outcome,
            "ended_at": last.ended_at,
        },
    }


def render_status_text(report: StatusReport) -> str:
    return render(report)


def print_status(
    paths: ProjectPaths,
    filters: FeatureFilter | None,
    *,
    as_json: bool = False,
    now: datetime | None = None,
) -> ExitCode:
    """`--status [--json]`: print the report, write the text to status.md; 3 without features/."""
    report = build_status(
        paths, filters, now or datetime.now(UTC).astimezone(), require_features=True
    )
    text = render_status_text(report)
    write_status(paths, text)
    if as_json:
        text = json.dumps(status_json(report), indent=2, ensure_ascii=False) + "\n"
    print_out(text)
    return ExitCode.SUCCESS
