"""Build the morning report: the events of the window tallied, the feature files and git
read, in one record that every renderer shows."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from aidd.project.checkpoints import CheckpointError, CheckpointStore
from aidd.project.features import load_features
from aidd.project.lockfile import holder_running, read_lock
from aidd.project.paths import ProjectPaths
from aidd.reports.morning import attention, features, fmt
from aidd.reports.morning.history import GitView
from aidd.reports.morning.reading import read_window
from aidd.reports.morning.record import (
    Count,
    Diffstat,
    Features,
    Gate,
    MorningReport,
    RunRow,
    Window,
)
from aidd.reports.morning.tally import Tally
from aidd.session import procfs


def build_report(paths: ProjectPaths, since: str | None, now: datetime,
                 environ: Mapping[str, str]) -> MorningReport:
    read = read_window(paths.events, since, now)
    window, seen = read.window, read.seen
    tally = Tally(window.start)
    for event, at in read.events:
        tally.add(event, at)
    tally.attempts.sort(key=lambda a: a.ended_at)
    runs = _runs(tally, _running_run(paths))
    feature_view, diffstat = _from_git(paths, tally, window, environ)
    gate = Gate(tally.gate_rows(), tally.gate_runs, tally.baseline_failing, tally.reverted)
    pauses = tally.pauses()
    facts = attention.Facts(window, runs, tally.attempts, feature_view, gate, pauses,
                            tally.notable, seen)
    return MorningReport(
        project_dir=paths.root.absolute(), generated_at=now, window=window, runs=runs,
        attempts=tuple(tally.attempts),
        results=tuple(Count(str(code), fmt.result_name(code), n)
                      for code, n in sorted(tally.results.items())),
        failures=tuple(Count(reason, reason.replace("_", " "), n)
                       for reason, n in tally.failures.most_common()),
        features=feature_view, diffstat=diffstat, usage=tally.usage(), pauses=pauses,
        gate=gate, checkpoints=tuple(tally.checkpoints),
        attention=attention.first_things(facts), events=seen)


def _running_run(paths: ProjectPaths) -> str | None:
    """The `-<pid>` ending of the run id of the aidd running on the project now, if any."""
    info = read_lock(paths.root, paths.lock)
    pid = info.get("pid")
    if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 and holder_running(
            pid, info, procfs):
        return f"-{pid}"
    return None


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


def _from_git(paths: ProjectPaths, tally: Tally, window: Window,
              environ: Mapping[str, str]) -> tuple[Features, Diffstat | None]:
    now = features.features_now(load_features(paths, validate=False)
                                if paths.features.is_dir() else [], str(paths.features))
    view = _git_view(paths, environ)
    if view is None:
        return features.from_mtimes(now, window, tally.attempts, []), None
    commits = view.commits_since(window.start)
    kept = view.existing(tally.checkpoints)
    if kept:
        changes = view.feature_changes(kept)
        diff = view.diffstat(kept[0].commit, kept[-1].commit, "checkpoints",
                             (kept[0].ref, kept[-1].ref))
        return features.from_changes(changes, now, tally.attempts, commits), diff
    return features.from_mtimes(now, window, tally.attempts, commits), _git_diff(view, window)


def _git_view(paths: ProjectPaths, environ: Mapping[str, str]) -> GitView | None:
    store = CheckpointStore(paths.root, "", environ)
    try:
        return GitView(store) if store.exists() else None
    except CheckpointError:  # a planted link where the private repository should be
        return None


def _git_diff(view: GitView, window: Window) -> Diffstat | None:
    """No checkpoints: the project's commits since the window began."""
    if view.private:
        return None
    base = view.base_commit(window.start)
    head = view.head()
    if base is None or head is None:
        return None
    return view.diffstat(base, head, "git", (base[:12], head[:12]))

