"""One pass over events.jsonl for the morning report: runs, attempts, results, usage, pauses,
the gate and checkpoints. Every value is untrusted: a field of the wrong type counts as
absent, never as a crash (`fmt`'s readers)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from aidd.events import slot_of
from aidd.numbers import count, delay_s, money
from aidd.reports.morning.fmt import clean, integer, text
from aidd.reports.morning.lanes import Merges
from aidd.reports.morning.record import (
    AttemptRow,
    CheckpointRow,
    GateRow,
    Pauses,
    SetAsideRow,
    Usage,
)

TOKEN_KINDS = ("input", "output", "reasoning", "cache_read", "cache_write")
HEX = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")  # a commit id, and nothing git could misread


def when(value: Any) -> datetime | None:
    """An event's `ts` (or any timestamp field) as an aware time, None when it is none."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


@dataclass
class RunSeen:
    name: str  # the run id, safe to show
    started_at: datetime | None = None
    ended_at: datetime | None = None
    reason: str | None = None
    exit_code: int | None = None
    duration_s: float | None = None
    attempts: int = 0
    in_window: bool = False


@dataclass
class _GateSeen:
    green_before: bool = False
    last: GateRow | None = None


@dataclass
class Tally:
    """What the window's events add up to; `add` takes them in file order."""

    start: datetime
    runs: dict[str, RunSeen] = field(default_factory=dict)
    attempts: list[AttemptRow] = field(default_factory=list)
    results: Counter[int] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    tokens: Counter[str] = field(default_factory=Counter)
    reported_usd: float = 0.0
    estimated_usd: float = 0.0
    unknown_cost: int = 0
    known_cost: int = 0
    rate_limit_s: float = 0.0
    rate_limits: int = 0
    pace_s: float = 0.0
    paces: int = 0
    gate_runs: int = 0
    baseline_failing: int | None = None
    reverted: int = 0
    set_aside: list[SetAsideRow] = field(default_factory=list)
    merges: Merges = field(default_factory=Merges)  # `--parallel N`'s merge queue
    _gates: dict[str, _GateSeen] = field(default_factory=dict)
    _run: RunSeen = field(default_factory=lambda: RunSeen(""))  # the run of the event at hand
    _starts: dict[tuple[str, int], tuple[datetime, str | None]] = field(default_factory=dict)

    def add(self, event: dict[str, Any], at: datetime) -> None:
        run, name = event.get("run"), event.get("event")
        if not isinstance(run, str) or not isinstance(name, str):
            return
        seen = self.runs.get(run)
        if seen is None:  # a run id is shown, so made safe to show, once per run
            seen = self.runs[run] = RunSeen(clean(run, 60))
        if name == "run_start":
            seen.started_at = at
        elif name == "run_end":
            self._run_end(seen, event, at)
        if at < self.start:
            return
        seen.in_window = True
        self._run = seen
        handler = _HANDLERS.get(name)
        if handler is not None:
            handler(self, seen.name, event, at)

    @staticmethod
    def _run_end(seen: RunSeen, event: dict[str, Any], at: datetime) -> None:
        seen.ended_at = at
        seen.reason = text(event.get("reason")) or "unknown"
        seen.exit_code = integer(event.get("exit_code"))
        seen.duration_s = delay_s(event.get("duration_s"))

    def _iteration_start(self, run: str, event: dict[str, Any], at: datetime) -> None:
        num = integer(event.get("number"))
        if num is not None:
            self._starts[(run, num)] = (at, text(event.get("kind")))

    def _iteration_end(self, run: str, event: dict[str, Any], at: datetime) -> None:
        num, result = event.get("number"), event.get("result")
        if type(num) is not int or type(result) is not int:
            return
        started, kind = self._starts.pop((run, num), (None, None))
        if started is None:
            started = at - timedelta(seconds=delay_s(event.get("duration_s")) or 0.0)
        outcome = text(event.get("outcome")) or "unknown"
        reason = text(event.get("reason")) or "unknown"
        tokens = _tokens(event.get("tokens"))
        cost = money(event.get("cost_usd"))
        estimated = event.get("cost_estimated") is True
        self.attempts.append(AttemptRow(run, num, started, at, result, outcome, reason, kind,
                                        sum(tokens.values()), cost, estimated, False,
                                        slot_of(event), text(event.get("feature"), 80)))
        self._run.attempts += 1
        self.results[result] += 1
        if outcome in ("failure", "fatal"):
            self.failures[reason] += 1
        totals = self.tokens
        for key, amount in tokens.items():
            totals[key] += amount
        if cost is None:
            self.unknown_cost += 1
        elif estimated:
            self.known_cost += 1
            self.estimated_usd += cost
        else:
            self.known_cost += 1
            self.reported_usd += cost

    def _rate_limit(self, run: str, event: dict[str, Any], at: datetime) -> None:
        self.rate_limits += 1
        self.rate_limit_s += delay_s(event.get("seconds")) or 0.0

    def _pace(self, run: str, event: dict[str, Any], at: datetime) -> None:
        self.paces += 1
        self.pace_s += delay_s(event.get("seconds")) or 0.0

    def _baseline(self, run: str, event: dict[str, Any], at: datetime) -> None:
        commands = event.get("commands")
        rows = [c for c in commands if isinstance(c, dict)] if isinstance(commands, list) else []
        self.baseline_failing = sum(1 for c in rows if c.get("ok") is not True)
        for command in rows:
            name = text(command.get("name"))
            if name is not None and command.get("ok") is True:
                self._gates.setdefault(name, _GateSeen()).green_before = True

    def _gate(self, run: str, event: dict[str, Any], at: datetime) -> None:
        name = text(event.get("name"))
        if name is None:
            return
        self.gate_runs += 1
        new_failures = integer(event.get("new_failures")) or 0
        ok = event.get("ok") is True
        red = new_failures > 0 or (not ok and integer(event.get("new_failures")) is None)
        num = integer(event.get("number"))
        if "slot" in event:  # a slot's worktree (--parallel): its attempt's, not the project's
            if red and num is not None:
                self._mark_gate_red(run, num)
            return
        seen = self._gates.setdefault(name, _GateSeen())
        previous = seen.last
        red_since = (previous.red_since if previous is not None and previous.red
                     and previous.red_since is not None else num) if red else None
        new = event.get("new")
        seen.last = GateRow(name, ok, red, num, new_failures,
                            integer(event.get("known_failures")) or 0,
                            tuple(clean(n) for n in new[:5] if isinstance(n, str))
                            if isinstance(new, list) else (),
                            red_since, red and seen.green_before)
        seen.green_before = seen.green_before or not red
        if red and num is not None:
            self._mark_gate_red(run, num)

    def _mark_gate_red(self, run: str, number: int) -> None:
        """The attempt the gate judged: the latest of that run and number (the gate runs
        right after its attempt, so it is found near the end)."""
        for index in range(len(self.attempts) - 1, -1, -1):
            row = self.attempts[index]
            if row.run == run and row.number == number:
                self.attempts[index] = row._replace(gate_red=True)
                return

    def _merge(self, run: str, event: dict[str, Any], at: datetime) -> None:
        self.merges.add(run, event, at)

    def _worktrees_cleaned(self, run: str, event: dict[str, Any], at: datetime) -> None:
        self.merges.cleaned(event)

    def _gate_passes(self, run: str, event: dict[str, Any], at: datetime) -> None:
        reverted = event.get("reverted")
        self.reverted += len(reverted) if isinstance(reverted, list) else 0

    def gate_rows(self) -> tuple[GateRow, ...]:
        return tuple(seen.last for _, seen in sorted(self._gates.items())
                     if seen.last is not None)

    def usage(self) -> Usage:
        return Usage({k: self.tokens.get(k, 0) for k in TOKEN_KINDS}, self.reported_usd,
                     self.estimated_usd, self.unknown_cost, self.known_cost)

    def pauses(self) -> Pauses:
        return Pauses(self.rate_limit_s, self.rate_limits, self.pace_s, self.paces)


def _tokens(value: Any) -> dict[str, int]:
    """The known kinds only: a planted map of a million keys costs nothing downstream."""
    if type(value) is not dict:
        return {}
    return {key: amount for key in TOKEN_KINDS
            if (amount := count(value.get(key))) is not None}


def _set_aside(tally: Tally, run: str, event: dict[str, Any], at: datetime) -> None:
    listed, words = event.get("attempts"), event.get("endings")
    numbers = tuple(n for n in listed if type(n) is int) if isinstance(listed, list) else ()
    endings = tuple(clean(w, 200) for w in words if isinstance(w, str)) \
        if isinstance(words, list) else ()
    tally.set_aside.append(SetAsideRow(run, text(event.get("feature"), 80) or "?",
                                       numbers[:20], endings[:20]))


_Handler = Callable[[Tally, str, dict[str, Any], datetime], None]
_HANDLERS: dict[str, _Handler] = {
    "feature_set_aside": _set_aside,
    "iteration_start": Tally._iteration_start,
    "iteration_end": Tally._iteration_end,
    "rate_limit_sleep": Tally._rate_limit,
    "pace": Tally._pace,
    "gate_baseline": Tally._baseline,
    "gate": Tally._gate,
    "gate_passes": Tally._gate_passes,
    "merge": Tally._merge,
    "worktrees_cleaned": Tally._worktrees_cleaned,
}


def checkpoint_rows(events: list[tuple[dict[str, Any], datetime]]) -> list[CheckpointRow]:
    """The window's `checkpoint` events (`reading` picked them out) as rows, wanted before the
    rest is added up: git reads them while this process tallies the other events (`build`)."""
    rows = []
    for event, at in events:
        run, label, ref, commit = (event.get("run"), event.get("label"), event.get("ref"),
                                   event.get("commit"))
        if (type(run) is str and type(label) is str and type(ref) is str
                and type(commit) is str and HEX.match(commit)):
            head, slot, feature = event.get("head"), slot_of(event), event.get("feature")
            rows.append(CheckpointRow(clean(run, 60), integer(event.get("number")),
                                      clean(label), clean(ref), commit, at,
                                      integer(event.get("files")),
                                      head if type(head) is str and HEX.match(head) else None,
                                      (slot, clean(feature, 120)) if slot is not None
                                      and type(feature) is str else None))
    return rows
