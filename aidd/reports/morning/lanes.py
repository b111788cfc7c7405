"""`--parallel N` in the morning report (issue 29): the merge queue's `merge` events as rows,
and one lane per slot, from the attempts' `slot` tags. A window without a slot or a merge has
no `Parallel`: the report of one agent's nights is as it was."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from aidd.events import slot_of
from aidd.reports.morning.fmt import integer, text
from aidd.reports.morning.record import AttemptRow, LaneRow, MergeRow, Parallel

MERGE_RESULTS = ("merged", "nothing", "conflict", "merge_red")  # docs/events.md, `merge`
SENT_BACK = frozenset({"conflict", "merge_red"})
MAX_MERGES = 1000  # rows kept (the last ones); the counts stay exact
MAX_KEPT = 100  # kept branches listed
_FEATURES = 20  # a lane's features listed


class Merges:
    """The window's merges, in file order, bounded."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.rows: deque[MergeRow] = deque(maxlen=MAX_MERGES)
        self.kept: dict[str, None] = {}  # in order; a branch merged or deleted later leaves

    def cleaned(self, event: dict[str, Any]) -> None:
        """A run's start named the unmerged branches of a stopped run (`worktrees_cleaned`)."""
        for name in _branches(event.get("deleted")):
            self.kept.pop(name, None)
        for name in _branches(event.get("kept")):
            if len(self.kept) < MAX_KEPT:
                self.kept[name] = None

    def add(self, run: str, event: dict[str, Any], at: datetime) -> None:
        result = event.get("result")
        if result not in MERGE_RESULTS:
            return  # no merge aidd writes: forged
        self.counts[str(result)] += 1
        if result in ("merged", "nothing"):
            self.kept.pop(text(event.get("branch"), 120) or "", None)
        self.rows.append(MergeRow(run, at, slot_of(event), text(event.get("feature"), 80) or "?",
                                  integer(event.get("number")), str(result),
                                  text(event.get("why"), 200)))


def parallel(attempts: Sequence[AttemptRow], merges: Merges) -> Parallel | None:
    slots = sorted({a.slot for a in attempts if a.slot is not None}
                   | {m.slot for m in merges.rows if m.slot is not None})
    if not slots and not merges.counts and not merges.kept:
        return None
    return Parallel(tuple(_lane(slot, attempts, merges.rows) for slot in slots),
                    {result: merges.counts[result] for result in MERGE_RESULTS},
                    tuple(merges.rows), tuple(merges.kept))


def _branches(value: Any) -> list[str]:
    """The `aidd/<id>` branch names of an event's list (anything else: forged, left out)."""
    found = value if isinstance(value, list) else []
    return [name for name in (text(v, 120) or "" for v in found if isinstance(v, str))
            if name.startswith("aidd/")]


def _lane(slot: int, attempts: Sequence[AttemptRow], merges: Sequence[MergeRow]) -> LaneRow:
    mine = [a for a in attempts if a.slot == slot]
    features = dict.fromkeys(a.feature for a in mine if a.feature)
    ended = Counter(m.result for m in merges if m.slot == slot)
    return LaneRow(slot, len(mine), sum((a.ended_at - a.started_at).total_seconds()
                                        for a in mine),
                   tuple(features)[:_FEATURES], ended["merged"],
                   sum(ended[r] for r in SENT_BACK))
