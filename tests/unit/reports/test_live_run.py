"""A run's own status.md (issue 33): `LiveRun` adds up the run's events as it emits them, and
the report built from it is the one `--status` reads from events.jsonl at that moment: lanes,
a pause, the health verdict, the last iteration (the previous run's until this one ends one)."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from aidd.project.paths import ProjectPaths
from aidd.reports.running import LiveRun, last_iteration
from aidd.reports.status import build_status
from tests.unit.parallelrun import START, end, event, parallel_run, start
from tests.unit.test_status import own_start_ticks

PID = os.getpid()
CURRENT = f"20261127T010000Z-{PID}"
STARTED = "2026-11-27T01:00:00+00:00"
OLDER = [event(-3600, "run_start") | {"run": "20261126T230000Z-1"},
         end(-3000, -3500, 9, 4, "old", result=1) | {"run": "20261126T230000Z-1"},
         start(-2900, 10, 4, "old") | {"run": "20261126T230000Z-1"}]


def _own(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The current run's events, as its EventLog hands them to its listeners."""
    return [e | {"run": CURRENT} for e in events]


def _pause(until_s: float) -> dict[str, Any]:
    return event(300, "rate_limit_sleep", number=6, seconds=60,
                 until=(START + timedelta(seconds=until_s)).isoformat())


def _failing() -> list[dict[str, Any]]:
    """One agent: a provider error, a hang, a stuck check, a red gate, nudges, a failed ping."""
    ones = [{k: v for k, v in e.items() if k not in ("slot", "feature")} for e in parallel_run()]
    return [*ones,
            end(120, 90, 4, 1, "checkout", result=72) | {"reason": "provider_error"},
            end(130, 91, 5, 2, "cart", result=71) | {"reason": "idle_timeout"},
            event(131, "nudge", number=5, nudge=2), event(132, "nudge", number=5, nudge=3),
            event(140, "stuck", iterations=[4, 5]),
            event(150, "gate", number=5, new_failures=2, new=["t1", "t2"]) | {"name": "pytest"},
            event(160, "notify_failed", target="ntfy", trigger="stuck", error="refused")]


CASES = {
    "lanes": parallel_run()[:-2],
    "lanes_ended": parallel_run(),
    "paused": [*_failing(), _pause(600)],
    "pause_over": [*_failing(), _pause(600), start(310, 7, 1, "checkout")],
    "pause_past": [*_failing(), _pause(-10)],
    "health": _failing(),
    "no_iteration_yet": parallel_run()[:2],
    "forged": [parallel_run()[0], start(5, 7, 0, "x"), start(6, 8, 1, "e\x1b]0;t\x07"),
               start(7, 9, 2, "x") | {"number": "9", "ts": ["x"]},
               event(8, "rate_limit_sleep", until=["x"]), {"slot": 3}],
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("stop", [False, True])
def test_the_runs_own_report_is_what_status_reads_from_outside(
        tmp_path: Path, name: str, stop: bool) -> None:
    paths = ProjectPaths(tmp_path / "shop")
    paths.features.mkdir(parents=True)
    paths.lock.write_text(json.dumps({
        "pid": PID, "pid_start": own_start_ticks(), "host": os.uname().nodename,
        "started_at": STARTED, "argv": ["aidd"]}))
    own = _own(CASES[name])
    paths.events.write_text("".join(json.dumps(e) + "\n" for e in [*OLDER, *own]))
    if stop:
        paths.stop.write_text("now\n")
    live = LiveRun(CURRENT, PID, STARTED, last_iteration(OLDER))
    for record in own:
        live.add(record)
    now = START + timedelta(seconds=400)
    outside = build_status(paths, None, now)
    assert outside.run.running
    assert outside.run.last_run == CURRENT
    run = outside.run
    shown = {"lanes": bool(run.lanes), "paused": run.paused_until is not None,
             "health": bool(run.health and run.health.reasons),
             "no_iteration_yet": run.last_iteration is not None and
             run.last_iteration.number == 9}  # the older run's, until this one ends one
    assert shown.get(name, True)
    assert build_status(paths, None, now, live=live) == outside


def test_its_verdict_is_the_one_judged_on_its_events(tmp_path: Path) -> None:
    """The run's end asks the same tally: what it said while running, it says at the end."""
    live = LiveRun(CURRENT, PID, STARTED)
    for record in _own(_failing()):
        live.add(record)
    report = build_status(ProjectPaths(tmp_path), None, START, live=live)
    assert report.run.health is not None
    assert [r.kind for r in report.run.health.reasons][:3] == ["stuck", "provider_error", "hung"]
    assert report.run.last_iteration is not None
    assert report.run.last_iteration.number == 5
