"""Build the morning report: the events of the window tallied, the feature files and git
read, in one record that every renderer shows."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from aidd.errors import result_words
from aidd.project.checkpoints import CheckpointStore
from aidd.project.features import load_features
from aidd.project.lockfile import lock_holder
from aidd.project.paths import ProjectPaths
from aidd.reports.health import Context, FeaturesLeft, judge
from aidd.reports.morning import features, fmt
from aidd.reports.morning.history import read_history
from aidd.reports.morning.lanes import parallel
from aidd.reports.morning.reading import read_window
from aidd.reports.morning.record import (
    Count,
    Gate,
    MorningReport,
    RunRow,
)
from aidd.reports.morning.tally import Tally, checkpoint_rows
from aidd.session import procfs


def build_report(paths: ProjectPaths, since: str | None, now: datetime,
                 environ: Mapping[str, str]) -> MorningReport:
    read = read_window(paths.events, since, now, paths.root)
    window, seen = read.window, read.seen
    points = checkpoint_rows(read.checkpoints)
    store = CheckpointStore(paths.root, "", environ)
    with ThreadPoolExecutor(max_workers=1) as pool:
        # git works on the other core while this thread adds the events up.
        history = pool.submit(read_history, store, points, window.start)
        tally = Tally(window.start)
        for event, at in read.events:
            tally.add(event, at)
        tally.attempts.sort(key=lambda a: a.ended_at)
        now_files = features.features_now(load_features(paths, validate=False)
                                          if paths.features.is_dir() else [],
                                          str(paths.features))
        found = history.result()
    runs = _runs(tally, _running_run(paths))
    feature_view = (features.from_changes(found.changes, now_files, found.kept,
                                          found.commits) if found.kept
                    else features.from_mtimes(now_files, window, tally.attempts, found.commits))
    gate = Gate(tally.gate_rows(), tally.gate_runs, tally.baseline_failing, tally.reverted)
    pauses = tally.pauses()
    left = FeaturesLeft(feature_view.total_now - feature_view.passing_now,
                        feature_view.total_now) if feature_view.total_now else None
    health = judge((event for event, at in read.events if at >= window.start), paths.root,
                   Context(features=left, running={r.run for r in runs if r.reason == "running"},
                           unread=seen.error))
    return MorningReport(
        project_dir=paths.root.absolute(), generated_at=now, window=window, runs=runs,
        attempts=tuple(tally.attempts),
        results=tuple(Count(str(code), result_words(code), n)
                      for code, n in sorted(tally.results.items())),
        failures=tuple(Count(reason, reason.replace("_", " "), n)
                       for reason, n in tally.failures.most_common()),
        features=feature_view, diffstat=found.diffstat, usage=tally.usage(), pauses=pauses,
        gate=gate, checkpoints=tuple(points),
        health=health, events=seen, checkpoints_refused=store.refusal(),
        needs_person=tuple(tally.set_aside), parallel=parallel(tally.attempts, tally.merges))


def _running_run(paths: ProjectPaths) -> str | None:
    """The `-<pid>` ending of the run id of the aidd running on the project now, if any."""
    holder = lock_holder(paths.root, paths.lock, procfs)
    return f"-{holder.pid}" if holder.alive else None


def _runs(tally: Tally, running: str | None) -> tuple[RunRow, ...]:
    rows = []
    for run, seen in tally.runs.items():
        if not seen.in_window:
            continue
        reason = seen.reason
        if reason is None:
            alive = running is not None and run.endswith(running) and run == _newest(tally)
            reason = "running" if alive else "no run_end"
        rows.append(RunRow(seen.name, seen.started_at, seen.ended_at,
                           fmt.clean(reason, 40), seen.exit_code, seen.duration_s,
                           seen.attempts))
    return tuple(rows)


def _newest(tally: Tally) -> str:
    return next(reversed(tally.runs))

