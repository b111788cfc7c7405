"""Is an aidd running on the project? Read, never taken: the lock file's pid and start time
against the process table, and `events.jsonl` for pauses, the last iteration and the last
run's health verdict (FEA-30, issue 28)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aidd.events import read_events
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
    """A `--parallel N` slot of the running run, as its newest event tells (issue 29)."""

    slot: int
    feature: str
    state: str  # "starting", "attempt NNN running", "between attempts", "merged", ...


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
    lanes: tuple[Lane, ...] = ()  # the running run's slots, with --parallel N > 1


def read_run_state(paths: ProjectPaths, now: datetime,
                   features: FeaturesLeft | None = None) -> RunState:
    """`features`: what is left now, for the health verdict."""
    holder = lock_holder(paths.root, paths.lock, procfs)
    # Shown as it is: a holder on another host is "unknown" here (it counts as alive).
    running = None if holder.state is HolderState.OTHER_HOST else holder.alive
    events = read_events(paths.events)
    paused = _paused_until(events, holder.pid, now) if running else None
    last = _last_run(events)
    health = None
    if last is not None:
        pid = holder.pid
        alive = {last} if running and pid is not None and last.endswith(f"-{pid}") else set()
        health = judge((e for e in events if e.get("run") == last), paths.root,
                       Context(features=features, running=alive))
    return RunState(
        running=running,
        pid=holder.pid if holder.alive else None,
        started_at=holder.started_at if holder.alive else None,
        paused_until=paused,
        last_iteration=_last_iteration(events),
        stop_requested=paths.stop.is_symlink() or paths.stop.exists(),
        last_run=last,
        health=health,
        lanes=_lanes(events, last) if running and last is not None else (),
    )


def _last_run(events: list[dict[str, Any]]) -> str | None:
    for event in reversed(events):
        if event.get("event") == "run_start" and isinstance(event.get("run"), str):
            return str(event["run"])
    return None


def _lanes(events: list[dict[str, Any]], run: str) -> tuple[Lane, ...]:
    """Each slot's feature and state: the newest of the run's events tagged with it."""
    lanes: dict[int, Lane] = {}
    for event in events:
        slot, feature = _int(event.get("slot")), _str(event.get("feature"))
        if event.get("run") != run or slot is None or feature is None:
            continue
        state = _lane_state(event)
        if state is not None:
            lanes[slot] = Lane(slot, feature, state)
    return tuple(lanes[slot] for slot in sorted(lanes))


_LANE_STATES = {"slot_start": "starting", "iteration_end": "between attempts",
                "rate_limit_sleep": "rate limited"}


def _lane_state(event: dict[str, Any]) -> str | None:
    kind = event.get("event")
    if kind == "iteration_start":
        number = _int(event.get("number"))
        return f"attempt {number:03d} running" if number is not None else "working"
    if kind == "merge":
        reason = _str(event.get("reason"))
        return "merged" if reason is None else f"sent back ({reason})"
    return _LANE_STATES.get(kind) if isinstance(kind, str) else None


def _paused_until(events: list[dict[str, Any]], pid: int | None, now: datetime) -> str | None:
    """The `until` of a rate-limit sleep of the running run that nothing has followed yet."""
    suffix = f"-{pid}"
    for event in reversed(events):
        run, kind = event.get("run"), event.get("event")
        if not (isinstance(run, str) and run.endswith(suffix)) or kind not in _SLEEP_ENDERS:
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
