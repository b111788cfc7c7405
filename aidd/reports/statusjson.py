"""The JSON form of the status report, what `--status --json` prints (FEA-35)."""

from __future__ import annotations

from typing import Any

from aidd.project.todo import TodoSummary
from aidd.reports.running import RunState
from aidd.reports.statusreport import PRIORITY_COLUMNS, StatusReport, TodoReport

# 2 (issue 18): AutoMaker's priorities (high, medium, low, other), done, verified, blocked.
SCHEMA_VERSION = 2


def status_json(report: StatusReport) -> dict[str, Any]:
    """The `--status --json` object; keys are never removed within a schema version."""
    counts = report.counts
    return {
        "schema": SCHEMA_VERSION,
        "generated_at": report.generated_at.isoformat(timespec="seconds"),
        "project": {"dir": str(report.project_dir), "name": report.project_name},
        "filters": report.filters.to_json() if report.filters is not None else None,
        "features": {
            "total": counts.total,
            "done": counts.done,
            "passing": counts.done,  # the same number: the name schema 1 gave it
            "failing": counts.failing,
            "in_progress": counts.in_progress,
            "waiting_approval": counts.waiting_approval,
            "waiting_person": counts.waiting_person,
            "open": counts.open,
            "closed": counts.closed,
            "verified": counts.verified,
            "blocked": counts.blocked,
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
        # The newest run's health verdict (issue 28; README "Health"), null before any run.
        "health": None if report.run.health is None else {
            "run": report.run.last_run, **report.run.health.to_json()},
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
    lanes = [{"slot": lane.slot, "feature": lane.feature, "state": lane.state}
             for lane in run.lanes]
    return {
        "running": run.running,
        "pid": run.pid,
        "started_at": run.started_at,
        "paused_until": run.paused_until,
        "stop_requested": run.stop_requested,
        "last_iteration": None
        if last is None
        else {
            "number": last.number,
            "result": last.result,
            "outcome": last.outcome,
            "ended_at": last.ended_at,
        },
        **({"lanes": lanes} if lanes else {}),  # --parallel N > 1 only: N = 1 as before
    }
