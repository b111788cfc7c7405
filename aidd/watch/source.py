"""Everything a frame needs, read from the project's `.automaker/` only: events (followed),
the lock's holder (read, never taken), the feature files (every few seconds) and the tail of
the attempt's log. Nothing here writes, locks or signals."""

from __future__ import annotations

from datetime import datetime

from aidd.project.features import load_features
from aidd.project.featurestate import WorkState
from aidd.project.lockfile import lock_holder
from aidd.project.paths import ProjectPaths
from aidd.session import procfs
from aidd.watch.follow import EventsFollower, log_tail
from aidd.watch.model import Features, Tracker, View, count_states

SLOW_S = 2.0  # how often the feature files and the lock are read again
OUTPUT_LINES = 40  # log lines kept for the screen (it shows as many as fit)


class Source:
    """The run being watched, brought up to date by `view(now, monotonic)`."""

    def __init__(self, paths: ProjectPaths) -> None:
        self.paths = paths
        self.tracker = Tracker()
        self._follower = EventsFollower(paths.root, paths.events)
        self._features = Features()
        self._running = False
        self._slow_at: float | None = None

    def view(self, now: datetime, monotonic: float, message: str = "") -> View:
        for event in self._follower.poll():
            self.tracker.feed(event)
        if self._slow_at is None or monotonic - self._slow_at >= SLOW_S:
            self._slow_at = monotonic
            self._features = read_features(self.paths)
            self._running = lock_holder(self.paths.root, self.paths.lock, procfs).alive
        log = self.tracker.attempt.log
        tail = log_tail(self.paths.root, self.paths.root / log, OUTPUT_LINES) if log else None
        quiet = None if tail is None or tail.modified is None else max(
            0.0, now.timestamp() - tail.modified)
        return View(self.tracker, now, self._features, tuple(tail.lines if tail else ()),
                    quiet, self._running, message)


def read_features(paths: ProjectPaths) -> Features:
    if not paths.features.is_dir():
        return Features()
    valid = [f.feature for f in load_features(paths, validate=False) if f.feature is not None]
    working = next((f for f in valid if f.state is WorkState.ACTIVE), None)
    return Features(total=len(valid), by_state=count_states([f.state.value for f in valid]),
                    working=f"{working.id}: {working.description}" if working else "")
