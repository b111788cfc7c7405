"""Which features became passing in the window, in which attempt and with which commit: read
from the feature changes between checkpoints; without checkpoints, from the feature files'
modification times (a weaker answer, and the report says which it is)."""

from __future__ import annotations

import bisect
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from aidd.project.features import FeatureFile
from aidd.project.featurestate import is_done
from aidd.reports.morning.fmt import clean
from aidd.reports.morning.history import Change, Commit
from aidd.reports.morning.record import AttemptRow, CheckpointRow, FeaturePass, Features, Window

# A commit counts as an attempt's when git stamped it within the attempt (whole seconds).
_SLACK = timedelta(seconds=2)


@dataclass(frozen=True)
class FeatureNow:
    passes: bool
    title: str | None
    mtime: datetime


def features_now(files: Sequence[FeatureFile], features_dir: str) -> dict[str, FeatureNow]:
    """Each feature file today, by its directory under features/."""
    out = {}
    for file in files:
        data = file.object
        title = data.get("title") if data is not None else None
        try:
            mtime = datetime.fromtimestamp(file.path.stat().st_mtime, UTC)
        except OSError:
            continue
        name = clean(os.path.relpath(file.dir_location, features_dir), 120)
        out[name] = FeatureNow(is_done(data),
                               clean(title, 100) if isinstance(title, str) and title.strip()
                               else None, mtime)
    return out


def from_changes(changes: Sequence[Change], now: dict[str, FeatureNow],
                 points: Sequence[CheckpointRow], commits: Sequence[Commit]) -> Features:
    passed, failed_again = [], []
    worked: Counter[str] = Counter()
    counted: set[tuple[str, str, int]] = set()
    net, series = 0, []
    made = _commits_made(points, commits)
    for change in changes:
        point = change.checkpoint
        if change.after is True and change.before is not True:
            net += 1
            commit = made.get((point.run, point.label))
            passed.append(FeaturePass(
                change.feature, change.title or _title(now, change.feature), point.run,
                point.number if point.label.partition("-")[2] in ("end", "prekill") else None,
                point.at,
                point.ref, commit.sha if commit else None, commit.subject if commit else None,
                _passing(now, change.feature)))
        elif change.before is True and change.after is not True:
            net -= 1
            failed_again.append(change.feature)
        if change.after is not True and point.number is not None:
            key = (change.feature, point.run, point.number)
            if key not in counted:
                counted.add(key)
                worked[change.feature] += 1
        series.append((point.at, net))
    return _features("checkpoints", passed, failed_again, worked, now, series)


def from_mtimes(now: dict[str, FeatureNow], window: Window,
                attempts: Sequence[AttemptRow], commits: Sequence[Commit]) -> Features:
    """No checkpoints: a feature passing now whose file changed in the window, put in the
    attempt that was running (or had just ended) when it changed."""
    passed = []
    for name, feature in sorted(now.items(), key=lambda item: item[1].mtime):
        if not feature.passes or feature.mtime < window.start:
            continue
        attempt = _attempt_at(attempts, feature.mtime)
        commit = _commit_of(attempt, commits)
        passed.append(FeaturePass(
            name, feature.title, attempt.run if attempt else None,
            attempt.number if attempt else None, feature.mtime, None,
            commit.sha if commit else None, commit.subject if commit else None, True))
    series = [(p.at, i) for i, p in enumerate(passed, 1)]
    return _features("mtime" if now else "none", passed, [], Counter(), now, series)


def _features(source: str, passed: list[FeaturePass], failed_again: list[str],
              worked: Counter[str], now: dict[str, FeatureNow],
              series: list[tuple[datetime, int]]) -> Features:
    passing_now = sum(1 for f in now.values() if f.passes)
    base = passing_now - (series[-1][1] if series else 0)  # passing when the window began
    struggling = sorted(((name, n) for name, n in worked.items() if not _passing(now, name)),
                        key=lambda item: (-item[1], item[0]))
    return Features(source, tuple(passed), tuple(dict.fromkeys(failed_again)),
                    tuple(struggling), passing_now, len(now), base,
                    tuple((at, base + n) for at, n in series))


def _attempt_at(attempts: Sequence[AttemptRow], moment: datetime) -> AttemptRow | None:
    """The attempt running at `moment`, else the last one that ended before it (`attempts`
    in the order they ended)."""
    i = bisect.bisect_left(attempts, moment - _SLACK, key=lambda a: a.ended_at)
    if i < len(attempts) and attempts[i].started_at - _SLACK <= moment:
        return attempts[i]
    return attempts[i - 1] if i > 0 else None


def _commits_made(points: Sequence[CheckpointRow], commits: Sequence[Commit]
                  ) -> dict[tuple[str, str], Commit]:
    """The project commit each attempt's later checkpoints (NNN-prekill, NNN-end) were on, by
    (run, label), where the attempt moved HEAD from where its start (NNN) found it: the commit
    the attempt made, never one guessed from times. Only commits git listed for the window
    count (a checkpoint event is project content)."""
    known = {c.sha: c for c in commits}
    starts = {(p.run, p.number): p.head for p in points if p.label.isdigit()}
    made = {}
    for point in points:
        before = starts.get((point.run, point.number), point.head)
        if point.head is not None and point.head != before and point.head in known:
            made[(point.run, point.label)] = known[point.head]
    return made


def _commit_of(attempt: AttemptRow | None, commits: Sequence[Commit]) -> Commit | None:
    """The newest project commit git stamped while the attempt ran (`commits` oldest
    first)."""
    if attempt is None:
        return None
    i = bisect.bisect_right(commits, attempt.ended_at + _SLACK, key=lambda c: c.at)
    if i and commits[i - 1].at >= attempt.started_at - _SLACK:
        return commits[i - 1]
    return None


def _passing(now: dict[str, FeatureNow], name: str) -> bool:
    feature = now.get(name)
    return feature is not None and feature.passes


def _title(now: dict[str, FeatureNow], name: str) -> str | None:
    feature = now.get(name)
    return feature.title if feature is not None else None
