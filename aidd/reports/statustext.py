"""The text form of the status report: what `--status` prints and `status.md` holds (FEA-30)."""

from __future__ import annotations

from collections.abc import Iterable

from aidd.console import shown
from aidd.project.todo import TodoSummary
from aidd.reports.running import RunState
from aidd.reports.statusreport import CategoryRow, StatusReport, TodoReport

_NONE = "-"
_HEADER = ("Category", "Total", "High", "Medium", "Low", "Other")


def render_status_text(report: StatusReport) -> str:
    filters = report.filters.describe() if report.filters is not None else ""
    title = f"# aidd status: {report.project_name}" + (f" (filters: {filters})" if filters else "")
    lines = [
        title,
        "",
        *_pairs([("Project", str(report.project_dir)),
                 ("Generated", report.generated_at.isoformat(timespec="seconds"))]),
        *(f"Note: {note}" for note in report.notes),
        "",
        "## Features",
        *_features(report),
        "",
        "## Categories",
        *_categories(report.categories),
        "",
        "## Findings",
        *_pairs([("Total", str(report.findings_total)),
                 ("Unfixed", str(report.findings_unfixed))]),
        "",
        *_todo(report.todo),
        "",
        "## Completion",
        *_pairs([("Pending since", _one(report.markers.pending_since or _NONE)),
                 ("Completed at", _one(report.markers.completed_at or _NONE))]),
        "",
        "## Run",
        *_run(report.run),
    ]  # fmt: skip
    return "\n".join(lines) + "\n"


def _pairs(pairs: Iterable[tuple[str, str]]) -> list[str]:
    pairs = list(pairs)
    width = max(len(label) for label, _ in pairs) + 2
    return [f"{label + ':':<{width}}{value}" for label, value in pairs]


def _features(report: StatusReport) -> list[str]:
    c = report.counts
    return _pairs(
        [
            ("Total features", str(c.total)),
            ("Done", str(c.done)),
            ("Not done", str(c.failing)),
            ("In progress", str(c.in_progress)),
            ("Waiting approval", str(c.waiting_approval)),
            ("Waiting for a person", str(c.waiting_person)),
            ("Open", str(c.open)),
            ("Blocked", str(c.blocked)),
            ("Verified", str(c.verified)),
            ("Completed (archived)", str(c.closed)),
            ("Invalid files", str(c.invalid)),
            ("Complete", f"{c.complete_pct}%"),
        ]
    )


def _categories(rows: tuple[CategoryRow, ...]) -> list[str]:
    if not rows:
        return ["(no features)"]
    table = [_HEADER] + [(_one(r.name), str(r.total), *map(str, r.priority)) for r in rows]
    name_width = max(len(row[0]) for row in table)
    widths = [max(len(row[i]) for row in table) for i in range(1, len(_HEADER))]
    return [
        "  ".join(
            [
                row[0].ljust(name_width),
                *(cell.rjust(w) for cell, w in zip(row[1:], widths, strict=True)),
            ]
        )
        for row in table
    ]


def _todo(todo: TodoReport) -> list[str]:
    if todo.file is None or todo.summary is None:
        return ["## TODO", f"No TODO file found (searched {', '.join(todo.searched)})."]
    s: TodoSummary = todo.summary
    lines = [f"## TODO ({todo.file})"]
    lines += _pairs(
        [
            ("Total", str(s.total)),
            ("Completed", str(len(s.done))),
            ("Incomplete", str(len(s.actionable))),
            ("Deferred", str(len(s.deferred))),
            ("Complete", f"{s.complete_pct}%"),
            ("TODO: markers", str(len(s.markers))),
        ]
    )
    for heading, items in (("Incomplete", s.actionable), ("Deferred", s.deferred),
                           ("Completed", s.done)):  # fmt: skip
        if items:
            lines += ["", f"### {heading}", *(f"- {_one(item)}" for item in items)]
    return lines


def _run(run: RunState) -> list[str]:
    if run.running is None:
        state = f"Unknown: the lock names pid {run.pid} on another host."
    elif run.running:
        state = f"Running: pid {run.pid}, started {run.started_at or _NONE}."
    else:
        state = "Not running."
    lines = [state]
    if run.stop_requested:
        lines.append("Stop requested: the run ends after its current agent run (exit 6)."
                     if run.running else "A stop request waits in .automaker/.stop: a run "
                     "started later removes it as stale.")
    if run.paused_until:
        lines.append(f"Paused until {run.paused_until} (rate limit).")
    if run.health is not None:  # the newest run's verdict, its reasons with their next step
        lines.append(f"Health of the last run: {run.health.line}.")
        lines += [f"- {reason.what}; next: {reason.next}" for reason in run.health.reasons]
    lines += [f"Slot {lane.slot}: {lane.feature}, {lane.state}." for lane in run.lanes]
    last = run.last_iteration
    if last is not None:
        lines.append(
            f"Last iteration: {_text(last.number)}, {last.outcome or _NONE} "
            f"(result {_text(last.result)}), ended {last.ended_at or _NONE}."
        )
    return [_one(line) for line in lines]  # times and outcomes read from the lock and events


def _text(value: int | None) -> str:
    return _NONE if value is None else str(value)


def _one(text: str) -> str:
    """A string from the project (a category, a todo item, a time read from a marker, the lock
    or events.jsonl) on one line, its control characters escaped, in status.md as on the
    terminal (issue 27 item 7)."""
    return shown(text, one_line=True)
