"""What `aidd watch` shows, as values: events folded into a `Tracker` (pure; the file is
untrusted, so every field is checked for its type and every number through aidd.numbers), and
one `View` per frame. Nothing here reads a file or the clock."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from aidd import numbers
from aidd.events import slot_of

RECENT = 8  # events kept for the "recent" list
# Events worth a line of their own in the recent list (the others show in their fields).
_NOTABLE = frozenset({
    "phase_start", "nudge", "kill", "children_reaped", "iteration_end", "rate_limit_sleep",
    "pace", "budget_exhausted", "stop_requested", "stop", "completion", "checkpoint_failed",
    "gate", "gate_passes", "stuck", "warning", "notify_failed", "signal", "run_end", "checkpoint",
    "previous_run", "merge"})


def text(value: Any) -> str:
    """A string field as it is (the screen filters it); anything else is unknown."""
    return value if isinstance(value, str) else ""


def moment(value: Any) -> datetime | None:
    """An event's `ts` (aidd writes UTC with a `Z`); None when it is no such time."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else None


@dataclass
class Attempt:
    """The attempt in progress (or the last one)."""

    number: int | None = None
    index: int | None = None
    of: int | None = None
    phase: str = ""
    kind: str = ""
    model: str = ""
    log: str = ""
    started: datetime | None = None
    liveness: str = ""
    why: str = ""
    nudges: int = 0
    ended: bool = False
    slot: int | None = None  # `--parallel N`: the slot that runs it
    feature: str = ""  # the feature the slot owns (its events' `feature` tag)
    merge: str = ""  # the merge queue's `result` for it, once there is one


@dataclass
class Tracker:
    """The last run in the file, folded event by event; a `run_start` begins a new one."""

    run_id: str = ""
    project: str = ""
    cli: str = ""
    model: str = ""
    host: str = ""
    started: datetime | None = None
    ended: datetime | None = None
    end_reason: str = ""
    exit_code: int | None = None
    budgets: dict[str, float] = field(default_factory=dict)
    attempt: Attempt = field(default_factory=Attempt)  # the one started last
    # `--parallel N`: each slot's attempt, by slot (at most events.MAX_SLOTS of them)
    lanes: dict[int, Attempt] = field(default_factory=dict)
    attempts: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    unknown_cost: int = 0  # attempts whose cost is unknown (no figure, no price)
    pause_until: datetime | None = None
    pause_why: str = ""
    gate: str = ""
    # The events themselves: made into lines only when shown (10,000 attempts' worth of
    # formatting was 40 % of opening such a night)
    recent: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT))
    events: int = 0

    def feed(self, event: dict[str, Any]) -> None:
        name = text(event.get("event"))
        if name == "run_start":
            self._begin(event)
        elif not self.run_id:
            return  # the tail of a run whose start the file no longer holds
        self.events += 1
        handler = _HANDLERS.get(name)
        if handler is not None:
            handler(self, event)
        if name in _NOTABLE:
            self.recent.append(event)

    def _begin(self, event: dict[str, Any]) -> None:
        fresh = Tracker()
        models = event.get("models")
        limits = event.get("limits")
        fresh.run_id = text(event.get("run"))
        fresh.project = text(event.get("project_dir"))
        fresh.cli = text(event.get("cli"))
        fresh.model = text(models.get("base")) if isinstance(models, dict) else ""
        fresh.host = text(event.get("host"))
        fresh.started = moment(event.get("ts"))
        fresh.budgets = _budgets(limits if isinstance(limits, dict) else {})
        fresh.attempt.of = _budget_int(limits, "max_iterations")
        self.__dict__.update(fresh.__dict__)


def _budget_int(limits: Any, key: str) -> int | None:
    return numbers.count(limits.get(key)) if isinstance(limits, dict) else None


def _budgets(limits: dict[str, Any]) -> dict[str, float]:
    found = {key: numbers.quantity(limits.get(key))
             for key in ("max_tokens", "max_cost_usd", "max_wall_time")}
    return {key: value for key, value in found.items() if value}


def _attempt_of(tracker: Tracker, event: dict[str, Any]) -> Attempt:
    """The attempt an event is about: its slot's with `--parallel N`, else the one in
    progress; a forged `slot` gets a throwaway one (it changes no lane)."""
    if "slot" not in event:
        return tracker.attempt
    slot = slot_of(event)
    return tracker.lanes.get(slot, Attempt()) if slot is not None else Attempt()


def _iteration_start(tracker: Tracker, event: dict[str, Any]) -> None:
    slot = slot_of(event)
    if "slot" in event and slot is None:
        return  # forged: neither a lane nor the attempt in progress
    of = numbers.count(event.get("of"))
    tracker.attempt = Attempt(
        number=numbers.count(event.get("number")), index=numbers.count(event.get("index")),
        of=of if of is not None else tracker.attempt.of, phase=text(event.get("phase")),
        kind=text(event.get("kind")), model=text(event.get("model")),
        log=text(event.get("log")), started=moment(event.get("ts")), slot=slot,
        feature=text(event.get("feature")) if slot is not None else "")
    if slot is not None:
        tracker.lanes[slot] = tracker.attempt
    tracker.pause_until, tracker.pause_why = None, ""


def _iteration_end(tracker: Tracker, event: dict[str, Any]) -> None:
    tracker.attempts += 1
    _attempt_of(tracker, event).ended = True
    tokens = event.get("tokens")
    if isinstance(tokens, dict):
        tracker.tokens += sum(numbers.count(tokens.get(k)) or 0 for k in ("input", "output"))
    cost = numbers.money(event.get("cost_usd"))
    if cost is None:
        tracker.unknown_cost += 1
    tracker.cost_usd += cost or 0.0


def _liveness(tracker: Tracker, event: dict[str, Any]) -> None:
    attempt = _attempt_of(tracker, event)
    attempt.liveness = text(event.get("state"))
    attempt.why = text(event.get("why"))


def _nudge(tracker: Tracker, event: dict[str, Any]) -> None:
    _attempt_of(tracker, event).nudges += 1


def _merge(tracker: Tracker, event: dict[str, Any]) -> None:
    if "slot" in event:  # the merge of a slot's feature: its lane says how it went
        _attempt_of(tracker, event).merge = text(event.get("result"))


def _pause(tracker: Tracker, event: dict[str, Any]) -> None:
    tracker.pause_until = moment(event.get("until"))
    tracker.pause_why = "rate limit" if text(event.get("event")) == "rate_limit_sleep" else "pacing"


def _gate(tracker: Tracker, event: dict[str, Any]) -> None:
    new = numbers.count(event.get("new_failures")) or 0
    verdict = "passed" if event.get("ok") is True else f"{new} new failure(s)"
    tracker.gate = f"{text(event.get('name'))}: {verdict}"


def _run_end(tracker: Tracker, event: dict[str, Any]) -> None:
    tracker.ended = moment(event.get("ts")) or tracker.started
    tracker.end_reason = text(event.get("reason"))
    tracker.exit_code = numbers.count(event.get("exit_code"))


_HANDLERS = {"iteration_start": _iteration_start, "iteration_end": _iteration_end,
             "liveness": _liveness, "nudge": _nudge, "rate_limit_sleep": _pause,
             "pace": _pause, "gate": _gate, "run_end": _run_end, "merge": _merge}


def event_line(event: dict[str, Any]) -> str:
    """One recent event as the list shows it: its time of day, name and a few fields."""
    name = text(event.get("event"))
    stamp = moment(event.get("ts"))
    when = stamp.strftime("%H:%M:%S") if stamp else "--:--:--"
    # A slot's events say which slot and feature (N = 1's carry no slot: its lines unchanged).
    tags = ("slot", "feature") if "slot" in event else ()
    keys = (*tags, "number", "label", "reason", "result", "exit_code", "state", "name", "ok",
            "message", "seconds")
    details = " ".join(f"{k}={_short(event[k])}" for k in keys if k in event)
    return f"{when} {name} {details}".rstrip()


def _short(value: Any) -> str:
    shown = value if isinstance(value, str) else numbers.shown(value)
    return shown if len(shown) <= 60 else shown[:60] + "…"


@dataclass(frozen=True)
class Features:
    """The project's feature counts by state (read apart: feature files, not events)."""

    total: int = 0
    by_state: tuple[tuple[str, int], ...] = ()
    working: str = ""  # the feature in progress, if one is

    @property
    def done(self) -> int:
        return dict(self.by_state).get("done", 0)


def count_states(states: list[str]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(Counter(states).items()))


@dataclass(frozen=True)
class View:
    """One frame's values: the tracker's run at `now`, plus what was read apart from events."""

    tracker: Tracker
    now: datetime
    features: Features
    output: tuple[str, ...]
    quiet_s: float | None  # seconds since the log last grew (the last sign of life)
    running: bool  # an aidd holds the project's lock
    message: str = ""  # the key's answer, or the question it asks
    # `--parallel N`: seconds since each lane's log last grew, by slot (its attempt running)
    lane_quiet: dict[int, float | None] = field(default_factory=dict)
    followed: int | None = None  # the slot whose output is shown (a key chose it); None: latest

    @property
    def followed_attempt(self) -> Attempt:
        """The attempt whose output is shown: the chosen slot's, else the one started last."""
        lane = self.tracker.lanes.get(self.followed) if self.followed is not None else None
        return lane or self.tracker.attempt
