"""What a project's runs used on one local day, from events.jsonl (untrusted content)."""

from __future__ import annotations

import json
from datetime import UTC, date, timedelta, timezone
from pathlib import Path
from typing import Any

from aidd.budget.spent import Spent, spent_on, sum_day

DAY = date(2026, 11, 22)


def _end(ts: str, tokens: Any = None, cost: Any = None, **extra: Any) -> dict[str, Any]:
    return {"v": 1, "ts": ts, "run": "r", "event": "iteration_end", "tokens": tokens,
            "cost_usd": cost, **extra}


def test_only_iteration_ends_of_that_local_day_count() -> None:
    records = [
        _end("2026-11-22T00:30:00.000Z", {"input": 100, "output": 50}, 0.5),
        _end("2026-11-22T23:30:00.000Z", {"input": 1}, 0.25, cost_estimated=True),
        _end("2026-11-21T23:59:59.999Z", {"input": 1000}, 9.0),  # yesterday
        {"event": "run_end", "ts": "2026-11-22T12:00:00.000Z", "tokens": {"input": 7},
         "cost_usd": 3.0},
    ]
    assert sum_day(records, DAY, UTC) == Spent(151, 0.75, True)
    berlin = timezone(timedelta(hours=1))  # 23:30Z is tomorrow there; 23:59Z yesterday is today
    assert sum_day(records, DAY, berlin) == Spent(1150, 9.5, False)


def test_odd_values_are_skipped_not_trusted() -> None:
    records = [
        _end("2026-11-22T10:00:00.000Z", {"input": -5, "output": "9", "x": True, "ok": 3}, "1"),
        _end("2026-11-22T10:00:00.000Z", [1, 2], float("nan")),
        _end("2026-11-22T10:00:00.000Z", None, 10**400),
        _end("2026-11-22T10:00:00.000Z", {"input": 2.5}, -3),
        _end("not a time", {"input": 10}, 1.0),
        _end("2026-11-22T10:00:00", {"input": 10}, 1.0),  # no zone: not ours
        _end(12, {"input": 10}, 1.0),
    ]
    assert sum_day(records, DAY, UTC) == Spent(3, 0.0, False)


def test_read_from_the_events_file(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    lines = [json.dumps(_end("2026-11-22T10:00:00.000Z", {"input": 40}, 0.1))] * 3
    events.write_text("\n".join(lines) + '\n{"torn')
    assert spent_on(events, DAY, UTC) == Spent(120, 0.1 * 3, False)
    assert spent_on(tmp_path / "missing.jsonl", DAY, UTC) == Spent()
