"""Is an aidd running on the project? Read, never taken: the lock file's pid and start time
against the process table, and `events.jsonl` for pauses, the last iteration and the last
run's health verdict (FEA-30, issue 28)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aidd.events import read_events, slot_of
from aidd.project.lockfile import HolderState, lock_holder
from aidd.project.paths import ProjectPaths
from aidd.reports.health import Context, FeaturesLeft, Health, judge
from aidd.session import procfs


@dataclass(frozen=True)
class LastIteration:
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


@dataclass(frozen=True)
class RunState:
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
    """`features`: what is left now, for the health verdict."""
    holder = lock_holder(paths.root, paths.lock, procfs)
    # Shown as it is: a holder on another host is "unknown" here (it counts as alive).
    running = None if holder.state is HolderState.OTHER_HOST else holder.alive
    events = read_events(paths.events)
    paused = _paused_until(events, holder.pid, now) if running else None
    last = _last_run(events)
    health, lanes = None, tuple[Lane, ...]()
    if last is not None:
        pid = holder.pid
        alive = {last} if running and pid is not None and last.endswith(f"-{pid}") else set()
        of_last = [e for e in events if e.get("run") == last]
        health = judge(of_last, paths.root, Context(features=features, running=alive))
        if alive:
            lanes = _lanes(of_last)
    return RunState(
        running=running,
        pid=holder.pid if holder.alive else None,
        started_at=holder.started_at if holder.alive else None,
        paused_until=paused,
        last_iteration=_last_iteration(events),
        stop_requested=paths.stop.is_symlink() or paths.stop.exists(),
        last_run=last,
        health=health,
        lanes=lanes,
    )


def _lanes(events: list[dict[str, Any]]) -> tuple[Lane, ...]:
    """Each slot's latest attempt (its `iteration_start`; a `slot_start` names its next
    feature before the attempt), and whether it ended yet. One look
    at each event's name first: 20,000 events cost ~15 ms."""
    started: dict[int, dict[str, Any]] = {}
    ended: dict[int, dict[str, Any]] = {}
    for event in events:
        kind = event.get("event")
        if kind not in ("iteration_start", "iteration_end", "slot_start"):  # a list: no crash
            continue
        slot = slot_of(event)
        if slot is None:
            continue
        if kind == "iteration_end":
            ended[slot] = event
        else:  # a slot_start: a new feature, no attempt of it yet
            started[slot] = event
            ended.pop(slot, None)
    lanes = []
    for slot in sorted(started):
        begun, end = started[slot], ended.get(slot)
        number = _int(begun.get("number"))
        over = end is not None and number is not None and _int(end.get("number")) == number
        since = end.get("ts") if over and end is not None else begun.get("ts")
        lanes.append(Lane(slot, _str(begun.get("feature")), number, _str(since),
                          working=not over))
    return tuple(lanes)


def _last_run(events: list[dict[str, Any]]) -> str | None:
    for event in reversed(events):
        if event.get("event") == "run_start" and isinstance(event.get("run"), str):
            return str(event["run"])
    return None


def _paused_until(events: list[dict[str, Any]], pid: int | None, now: datetime) -> str | None:
    """The `until` of a rate-limit sleep of the running run that nothing has followed yet."""
    suffix = f"-{pid}"
    for event in reversed(events):
        run, kind = event.get("run"), event.get("event")
        # `kind` checked first: a planted list for a name made `in` a crash of --status
        if not (isinstance(run, str) and run.endswith(suffix) and isinstance(kind, str)) \
                or kind not in _SLEEP_ENDERS:
            continue
        until = event.get("until")
        if kind != "rate_limit_sleep" or not isinstance(until, str):
            return None
        return until if _after(until, now) else None
    return None


# A sleep is over once the run starts or ends an iteration, or ends.
_SLEEP_ENDERS = frozenset(("rate_limit_sleep", "iteration_start", "iteration_end", "run_end"))


def _after(stamp: str, now: datetime) -> bool:
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return False
    return moment.tzinfo is not None and moment > now


def _last_iteration(events: list[dict[str, Any]]) -> LastIteration | None:
    for event in reversed(events):
        if event.get("event") == "iteration_end":
            return LastIteration(
                number=_int(event.get("number")),
                result=_int(event.get("result")),
                outcome=_str(event.get("outcome")),
                ended_at=_str(event.get("ts")),
            )
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
