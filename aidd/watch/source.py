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
from aidd.watch.follow import EventsFollower, log_modified, log_tail
from aidd.watch.model import Features, Tracker, View, count_states

LOCK_S = 2.0  # how often the lock's holder is looked at again
# The feature files change with the agent's work: read again when an attempt starts or ends,
# else this often (a scan of 500 files every 2 s cost 3 % of a core on an idle run).
FEATURES_S = 30.0
CATCH_UP = 8  # chunks of events read for one frame at most: keys stay answered on a huge file
# (`merge`: `--parallel N`'s queue carried a slot's feature file back to the project)
_FEATURE_EVENTS = frozenset({"run_start", "iteration_start", "iteration_end", "run_end",
                             "merge"})
OUTPUT_LINES = 40  # log lines kept for the screen (it shows as many as fit)
LANES_LOOKED_AT = 16  # `--parallel N`: the running lanes whose logs are looked at, by slot


class Source:
    """The run being watched, brought up to date by `view(now, monotonic)`."""

    def __init__(self, paths: ProjectPaths) -> None:
        self.paths = paths
        self.tracker = Tracker()
        self._follower = EventsFollower(paths.root, paths.events)
        self._features = Features()
        self._running = False
        self._lock_at: float | None = None
        self._features_at: float | None = None
        self.followed: int | None = None  # `--parallel N`: the slot whose output is shown

    def view(self, now: datetime, monotonic: float, message: str = "") -> View:
        if self._follow() or self._features_at is None or (
                monotonic - self._features_at >= FEATURES_S):
            self._features_at = monotonic
            self._features = read_features(self.paths)
        if self._lock_at is None or monotonic - self._lock_at >= LOCK_S:
            self._lock_at = monotonic
            self._running = lock_holder(self.paths.root, self.paths.lock, procfs).alive
        lane = self.tracker.lanes.get(self.followed) if self.followed is not None else None
        log = (lane or self.tracker.attempt).log
        tail = log_tail(self.paths.root, self.paths.root / log, OUTPUT_LINES) if log else None
        quiet = None if tail is None or tail.modified is None else max(
            0.0, now.timestamp() - tail.modified)
        return View(self.tracker, now, self._features, tuple(tail.lines if tail else ()),
                    quiet, self._running, message, self._lane_quiet(now),
                    self.followed if lane is not None else None)

    def _lane_quiet(self, now: datetime) -> dict[int, float | None]:
        """Seconds since each running lane's log grew (the first LANES_LOOKED_AT by slot)."""
        running = sorted(slot for slot, a in self.tracker.lanes.items() if not a.ended)
        quiet: dict[int, float | None] = {}
        for slot in running[:LANES_LOOKED_AT]:
            log = self.tracker.lanes[slot].log
            modified = log_modified(self.paths.root, self.paths.root / log) if log else None
            quiet[slot] = None if modified is None else max(0.0, now.timestamp() - modified)
        return quiet

    @property
    def running(self) -> bool:
        """An aidd held the project's lock at the last look (every LOCK_S)."""
        return self._running

    def _follow(self) -> bool:
        """Feed the new events; True when one may have changed the feature files."""
        changed = False
        for _ in range(CATCH_UP):
            for event in self._follower.poll():
                self.tracker.feed(event)
                changed = changed or event.get("event") in _FEATURE_EVENTS
            if not self._follower.behind:
                break
        return changed


def read_features(paths: ProjectPaths) -> Features:
    if not paths.features.is_dir():
        return Features()
    valid = [f.feature for f in load_features(paths, validate=False) if f.feature is not None]
    working = next((f for f in valid if f.state is WorkState.ACTIVE), None)
    return Features(total=len(valid), by_state=count_states([f.state.value for f in valid]),
                    working=f"{working.id}: {working.description}" if working else "")
