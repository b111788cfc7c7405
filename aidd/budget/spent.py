"""What attempts used: a total of tokens and dollars, and what a project's runs used on one local
day, summed from the `iteration_end` events of its `events.jsonl` (untrusted: odd values are
skipped, never trusted into a crash)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime, tzinfo
from pathlib import Path
from typing import Any, NamedTuple

from aidd.events import read_events
from aidd.numbers import count, money


class Spent(NamedTuple):
    tokens: int = 0  # every kind summed: input, output, reasoning, cache read and write
    cost_usd: float = 0.0  # reported and estimated dollars; unknown costs add nothing
    estimated: bool = False  # some of cost_usd is aidd's estimate

    def plus(self, tokens: Mapping[str, Any] | None, cost_usd: Any,
             estimated: Any = False) -> Spent:
        counts = [count(v) or 0 for v in (tokens or {}).values()]
        dollars = money(cost_usd) or 0.0
        return Spent(self.tokens + sum(counts), self.cost_usd + dollars,
                     self.estimated or (bool(dollars) and estimated is True))


def spent_on(events: Path, day: date, zone: tzinfo) -> Spent:
    """Every run's attempts on local `day`, from the project's events (one read, capped)."""
    return sum_day(read_events(events), day, zone)


def sum_day(records: Iterable[dict[str, Any]], day: date, zone: tzinfo) -> Spent:
    total = Spent()
    for record in records:
        if record.get("event") == "iteration_end" and _day(record.get("ts"), zone) == day:
            tokens = record.get("tokens")
            total = total.plus(tokens if isinstance(tokens, dict) else None,
                               record.get("cost_usd"), record.get("cost_estimated"))
    return total


def _day(stamp: Any, zone: tzinfo) -> date | None:
    if not isinstance(stamp, str):
        return None
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return when.astimezone(zone).date() if when.tzinfo is not None else None
