"""Is an aidd running on the project? Read, never taken: the lock file's pid and start time
against the process table, and `events.jsonl` for pauses, the last iteration and the last
run's health verdict (FEA-30, issue 28). A run itself knows all that without reading events:
`LiveRun` adds up its events as it emits them, for its own status.md before each attempt."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from aidd.events import read_events, slot_of
from aidd.project.lockfile import HolderState, lock_holder
from aidd.project.paths import ProjectPaths
from aidd.reports.health import Context, FeaturesLeft, Health, judge, verdict
from aidd.reports.healthtally import Tally
from aidd.session import procfs

Event = dict[str, Any]  # as events.jsonl holds it: untrusted


class LastIteration(NamedTuple):
    number: int | None
    result: int | None
    outcome: str | None  # as recorded in events.jsonl (LOG-42)
    ended_at: str | None


@dataclass(frozen=True)
class Lane:
    """`--parallel N`: one slot of the running run, as its events tell it."""

    slot: int
    feature: str | None
    attempt: int | None  # its latest attempt's log number
    since: str | None  # when that attempt started, or ended when `working` is False
    working: bool  # that attempt is running (else it ended: its merge, or the next one, waits)


class RunState(NamedTuple):
    running: bool | None  # None: the lock names another host, so it cannot be checked
    pid: int | None
    started_at: str | None
    paused_until: str | None
    last_iteration: LastIteration | None
    stop_requested: bool = False  # .automaker/.stop is there (a file, a link or a directory)
    last_run: str | None = None  # the newest run's id
    health: Health | None = None  # the verdict on that run so far
    lanes: tuple[Lane, ...] = ()  # `--parallel N`: the running run's slots, by slot


def read_run_state(paths: ProjectPaths, now: datetime,
                   features: FeaturesLeft | None = None) -> RunState:
    """From outside the run (`--status`): `features`, what is left now, for the verdict."""
    holder = lock_holder(paths.root, paths.lock, procfs)
    # Shown as it is: a holder on another host is "unknown" here (it counts as alive).
    running = None if holder.state is HolderState.OTHER_HOST else holder.alive
    events = read_events(paths.events)
    paused = None
    if running:
        suffix = f"-{holder.pid}"
        paused = _paused_until(_last_sleep_ender(
            e for e in events if isinstance(e.get("run"), str) and e["run"].endswith(suffix)),
            now)
    last = _last_run(events)
    health, lanes = None, tuple[Lane, ...]()
    if last is not None:
        pid = holder.pid
        alive = {last} if running and pid is not None and last.endswith(f"-{pid}") else set()
        of_last = [e for e in events if e.get("run") == last]
        health = judge(of_last, paths.root, Context(features=features, running=alive))
        if alive:
            lanes = Lanes.of(of_last).lanes()
    return RunState(
        running=running,
        pid=holder.pid if holder.alive else None,
        started_at=holder.started_at if holder.alive else None,
        paused_until=paused,
        last_iteration=last_iteration(events),
        stop_requested=_stop_requested(paths),
        last_run=last,
        health=health,
        lanes=lanes,
    )


class LiveRun:
    """What a run knows of its own events, added up one at a time as it emits them (a listener
    of its EventLog, run/lifecycle.py), so its status.md before each attempt reads no events
    (issue 33): the health tally, its last iteration, a rate-limit sleep, its slots. The stop
    watcher, the courier and the slots emit from their threads: one lock."""

    def __init__(self, run_id: str, pid: int, started_at: str,
                 before: LastIteration | None = None) -> None:
        self.run_id, self.pid, self.started_at = run_id, pid, started_at
        self.tally = Tally()
        self._lanes = Lanes()
        self._last_end: Event | None = None
        self._sleep: Event | None = None  # the last of _SLEEP_ENDERS
        self._before = before  # the newest iteration_end before this run (its start read it)
        self._lock = threading.Lock()

    def add(self, event: Event) -> None:
        with self._lock:
            self.tally.add(event)
            self._lanes.add(event)
            kind = event.get("event")
            if kind == "iteration_end":
                self._last_end = event
            if kind in _SLEEP_ENDERS:
                self._sleep = event

    def verdict(self, root: Path, context: Context) -> Health:
        with self._lock:
            return verdict(self.tally, root, context)

    def state(self, paths: ProjectPaths, now: datetime,
              features: FeaturesLeft | None = None) -> RunState:
        """What `read_run_state` reads from outside while this run goes."""
        context = Context(features=features, running={self.run_id})
        with self._lock:
            last = _iteration_of(self._last_end) if self._last_end is not None else self._before
            return RunState(
                running=True, pid=self.pid, started_at=self.started_at,
                paused_until=_paused_until(self._sleep, now), last_iteration=last,
                stop_requested=_stop_requested(paths), last_run=self.run_id,
                health=verdict(self.tally, paths.root, context), lanes=self._lanes.lanes())


class Lanes:
    """Each slot's latest attempt (its `iteration_start`; a `slot_start` names its next
    feature before the attempt), and whether it ended yet, one event at a time. One look at
    each event's name first: 20,000 events cost ~15 ms."""

    def __init__(self) -> None:
        self._started: dict[int, Event] = {}
        self._ended: dict[int, Event] = {}

    @classmethod
    def of(cls, events: Iterable[Event]) -> Lanes:
        lanes = cls()
        for event in events:
            lanes.add(event)
        return lanes

    def add(self, event: Event) -> None:
        kind = event.get("event")
        if kind not in ("iteration_start", "iteration_end", "slot_start"):  # a list: no crash
            return
        slot = slot_of(event)
        if slot is None:
            return
        if kind == "iteration_end":
            self._ended[slot] = event
        else:  # a slot_start: a new feature, no attempt of it yet
            self._started[slot] = event
            self._ended.pop(slot, None)

    def lanes(self) -> tuple[Lane, ...]:
        lanes = []
        for slot in sorted(self._started):
            begun, end = self._started[slot], self._ended.get(slot)
            number = _int(begun.get("number"))
            over = end is not None and number is not None and _int(end.get("number")) == number
            since = end.get("ts") if over and end is not None else begun.get("ts")
            lanes.append(Lane(slot, _str(begun.get("feature")), number, _str(since),
                              working=not over))
        return tuple(lanes)


def _stop_requested(paths: ProjectPaths) -> bool:
    return paths.stop.is_symlink() or paths.stop.exists()


def _last_run(events: list[dict[str, Any]]) -> str | None:
    for event in reversed(events):
        if event.get("event") == "run_start" and isinstance(event.get("run"), str):
            return str(event["run"])
    return None


def _last_sleep_ender(events: Iterable[Event]) -> Event | None:
    last = None
    for event in events:
        if event.get("event") in _SLEEP_ENDERS:  # a name is a str (events.parse_event)
            last = event
    return last


def _paused_until(event: Event | None, now: datetime) -> str | None:
    """The `until` of a rate-limit sleep that nothing has followed yet (`event`: the last of
    the run's sleeps and what ends one)."""
    if event is None or event.get("event") != "rate_limit_sleep":
        return None
    until = event.get("until")
    return until if isinstance(until, str) and _after(until, now) else None


# A sleep is over once the run starts or ends an iteration, or ends.
_SLEEP_ENDERS = frozenset(("rate_limit_sleep", "iteration_start", "iteration_end", "run_end"))


def _after(stamp: str, now: datetime) -> bool:
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return False
    return moment.tzinfo is not None and moment > now


def last_iteration(events: list[dict[str, Any]]) -> LastIteration | None:
    """The newest `iteration_end` of `events`, any run's."""
    for event in reversed(events):
        if event.get("event") == "iteration_end":
            return _iteration_of(event)
    return None


def _iteration_of(event: Event) -> LastIteration:
    return LastIteration(number=_int(event.get("number")), result=_int(event.get("result")),
                         outcome=_str(event.get("outcome")), ended_at=_str(event.get("ts")))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
