"""The status report (FEA-30..35): read from the project into a `StatusReport`, its text kept in
`.automaker/status.md`, printed by `--status [--json]`."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from aidd.clock import Clock, SystemClock
from aidd.console import aidd_command, json_text, print_out
from aidd.errors import ExitCode, NotFoundError
from aidd.fsio import Rewriter, place
from aidd.project import featurestate
from aidd.project.attemptfeature import started_in
from aidd.project.features import Feature, FeatureFile, gc_paused, is_unfixed, load_features
from aidd.project.featurestate import WorkState
from aidd.project.filters import FeatureFilter, counted_features
from aidd.project.markers import read_markers
from aidd.project.paths import ProjectPaths
from aidd.project.todo import find_todo_file, read_todo, searched_names
from aidd.reports.health import FeaturesLeft
from aidd.reports.running import LiveRun, read_run_state
from aidd.reports.statusreport import CategoryRow, FeatureCounts, StatusReport, TodoReport

# Re-exported for run/iteration.py until it calls `refresh_status_file` instead.
from aidd.reports.statustext import render_status_text

NO_CATEGORY = "(none)"


def build_status(
    paths: ProjectPaths,
    filters: FeatureFilter | None,
    now: datetime,
    *,
    require_features: bool = False,
    live: LiveRun | None = None,
) -> StatusReport:
    """Read everything the report shows. `require_features`: `--status` exits 3 (FEA-34)
    without `features/`; before an agent start a missing one gives zeros and a note. `live`:
    the run's own state, known without reading its events (else read from outside)."""
    exists = paths.features.is_dir()
    if require_features and not exists:
        raise NotFoundError(f"{paths.rel(paths.features)} does not exist")
    with gc_paused():  # the whole report: see gc_paused
        files = load_features(paths, validate=False) if exists else []
        counted = counted_features(files, filters)
        valid = [f.feature for f in counted if f.feature is not None]
        findings = [f for f in files if f.is_finding]
        counts = count_features(valid, len(counted) - len(valid))
        return StatusReport(
            project_dir=paths.root.absolute(),
            generated_at=now,
            filters=filters if filters is not None and filters.active else None,
            features_dir=exists,
            counts=counts,
            categories=category_rows(valid),
            findings_total=len(findings),
            findings_unfixed=sum(1 for f in findings if is_unfixed(f)),
            todo=_todo_report(paths),
            markers=read_markers(paths),
            run=read_run_state(paths, now, left_of(counts)) if live is None
            else live.state(paths, now, left_of(counts)),
            notes=_notes(paths, files, exists),
            started=started_in(files),
        )


def _notes(paths: ProjectPaths, files: list[FeatureFile], exists: bool) -> tuple[str, ...]:
    if not exists:
        return (f"{paths.rel(paths.features)} does not exist yet",)
    # `passes` first: reads_differently needs it, and most files fail it without a call;
    # --migrate-features' module is imported only then (a run's status.md at each attempt).
    passed = [f for f in files if f.feature is not None and f.feature.passes]
    if not passed:
        return ()
    from aidd.project.migrate import reads_differently

    old = sum(1 for f in passed if reads_differently(f.data))
    if not old:
        return ()
    return (f"{old} feature file(s) say passes: true with status in_progress: an earlier "
            "aidd's done, or reopened on the board; if aidd finished them, "
            f"{aidd_command(paths.root, '--migrate-features')} rewrites them to verified",)


def count_features(valid: list[Feature], invalid: int) -> FeatureCounts:
    """The feature counts (FEA-31, issue 18) over the counted features without errors."""
    states = Counter(f.state for f in valid)
    statuses = Counter(f.status for f in valid)
    done_ids = {f.id for f in valid if f.state is WorkState.DONE}
    # One pass each, in C where it can (five Python passes were ~2 ms at 5,000, issue 33): a
    # valid feature's dependencies are strings (featurerules), so `blocking` is issuperset.
    blocked = sum(1 for f in valid if f.state is not WorkState.DONE
                  and not done_ids.issuperset(f.dependencies))
    return FeatureCounts(
        total=len(valid),
        done=states[WorkState.DONE],
        failing=len(valid) - states[WorkState.DONE] - states[WorkState.REVIEW]
        - states[WorkState.WAITING],
        in_progress=states[WorkState.ACTIVE],
        waiting_approval=states[WorkState.REVIEW],
        waiting_person=states[WorkState.WAITING],
        open=states[WorkState.OPEN],
        closed=statuses["completed"],
        invalid=invalid,
        blocked=blocked,
        verified=statuses[featurestate.FINISHED_STATUS],
    )


def features_left(paths: ProjectPaths, filters: FeatureFilter | None) -> FeaturesLeft | None:
    """The counted features not done (`failing`), for the health verdict at a run's end;
    None without features."""
    if not paths.features.is_dir():
        return None
    counted = counted_features(load_features(paths, validate=False), filters)
    return left_of(count_features([f.feature for f in counted if f.feature is not None], 0))


def left_of(counts: FeatureCounts) -> FeaturesLeft | None:
    return FeaturesLeft(counts.failing, counts.total) if counts.total else None


def category_rows(valid: list[Feature]) -> tuple[CategoryRow, ...]:
    """Every category, by count descending then name; AutoMaker's priorities 1 High, 2 Medium,
    3 Low, and aidd's old 4 (low) as Low; else Other (FEA-32, issue 18)."""
    cells = Counter((f.category or NO_CATEGORY, _PRIORITY_COLUMN.get(f.priority, 3))
                    for f in valid)  # counted in C: a list and a call a file were ~1 ms at 5,000
    table: dict[str, list[int]] = {}
    for (name, column), count in cells.items():
        table.setdefault(name, [0, 0, 0, 0])[column] += count
    rows = [CategoryRow(name, sum(c), (c[0], c[1], c[2], c[3])) for name, c in table.items()]
    return tuple(sorted(rows, key=lambda r: (-r.total, r.name)))


# The column of each priority in PRIORITY_COLUMNS (1.0 finds 1); any other number, Other.
_PRIORITY_COLUMN: dict[float | None, int] = {1: 0, 2: 1, 3: 2, 4: 2}


def _todo_report(paths: ProjectPaths) -> TodoReport:
    found = find_todo_file(paths)
    summary = read_todo(paths.root, found) if found is not None else None
    rel = paths.rel(found) if found is not None and summary is not None else None
    return TodoReport(rel, summary, searched_names(paths))


def write_status(paths: ProjectPaths, text: str) -> None:
    """`.automaker/status.md`, atomically (FEA-30, LAY-12); not fsynced: it is written again
    before every attempt and by every `--status` (docs/decisions.md "Speed")."""
    place(paths.root, paths.automaker, paths.status, text.encode(), 0o644, replace=True)


class StatusFile(Rewriter):
    """A run's status.md, rewritten before each attempt (FEA-30) whole, as `write_status`
    writes it, with no new file each time (fsio.Rewriter, issue 33)."""

    def __init__(self, paths: ProjectPaths) -> None:
        super().__init__(paths.root, paths.status)


def refresh_status_file(
    paths: ProjectPaths,
    filters: FeatureFilter | None,
    now: datetime,
    *,
    require_features: bool = False,
    live: LiveRun | None = None,
    out: StatusFile | None = None,
) -> tuple[StatusReport, str]:
    """Build the report and keep its text in status.md (FEA-30), through `out` in a run; the
    report and that text."""
    report = build_status(paths, filters, now, require_features=require_features, live=live)
    text = render_status_text(report)
    if out is not None:
        out.write(text)
    else:
        write_status(paths, text)
    return report, text


def print_status(
    paths: ProjectPaths,
    filters: FeatureFilter | None,
    *,
    as_json: bool = False,
    clock: Clock | None = None,
) -> ExitCode:
    """`--status [--json]`: print the report, write the text to status.md; 3 without features/."""
    now = (clock or SystemClock()).now()
    report, text = refresh_status_file(paths, filters, now, require_features=True)
    if as_json:
        from aidd.reports.statusjson import status_json  # lazy: a run writes the text only

        text = json_text(status_json(report))
    print_out(text)
    return ExitCode.SUCCESS
