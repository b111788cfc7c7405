"""`--status` of a running `--parallel N` run: one lane per slot, from the current run's events
(slot, feature, attempt, since when); a run of one agent's text and JSON stay as they were."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from aidd.project.paths import ProjectPaths
from aidd.reports.status import build_status
from aidd.reports.statusjson import status_json
from aidd.reports.statustext import render_status_text
from tests.unit.parallelrun import RUN, START, parallel_run, start
from tests.unit.test_status import own_start_ticks

PID = os.getpid()
CURRENT = f"20261127T010000Z-{PID}"


def _project(tmp_path: Path, events: list[dict[str, Any]], *, running: bool) -> ProjectPaths:
    paths = ProjectPaths(tmp_path / "shop")
    paths.features.mkdir(parents=True)
    if running:
        paths.lock.write_text(json.dumps({
            "pid": PID, "pid_start": own_start_ticks(), "host": os.uname().nodename,
            "started_at": "2026-11-27T01:00:00+00:00", "argv": ["aidd"]}))
    lines = [json.dumps(e | {"run": CURRENT} if e["run"] == RUN else e) for e in events]
    paths.events.write_text("\n".join(lines) + "\n")
    return paths


def _older_run() -> list[dict[str, Any]]:
    """A run before the current one, whose slot 4 must not show as a lane now."""
    return [start(-3600, 1, 4, "old") | {"run": "20261126T230000Z-1"}]


def test_a_running_parallel_run_shows_one_lane_per_slot(tmp_path: Path) -> None:
    events = [*_older_run(), *parallel_run()[:-2]]  # 006 (slot 3) has not started yet
    report = build_status(_project(tmp_path, events, running=True), None, START)
    text = render_status_text(report)
    assert ("Lanes: 3 agents (--parallel).\n"
            "- slot 1: checkout, attempt 004, working since 2026-11-27T01:01:30.000Z\n"
            "- slot 2: cart, attempt 005, working since 2026-11-27T01:01:31.000Z\n"
            "- slot 3: search, attempt 003, attempt ended 2026-11-27T01:01:20.000Z\n") in text
    assert status_json(report)["run"]["lanes"] == [
        {"slot": 1, "feature": "checkout", "attempt": 4,
         "since": "2026-11-27T01:01:30.000Z", "working": True},
        {"slot": 2, "feature": "cart", "attempt": 5,
         "since": "2026-11-27T01:01:31.000Z", "working": True},
        {"slot": 3, "feature": "search", "attempt": 3,
         "since": "2026-11-27T01:01:20.000Z", "working": False}]


@pytest.mark.parametrize("running", [True, False])
def test_no_lanes_for_one_agent_or_a_run_that_is_over(tmp_path: Path, running: bool) -> None:
    events = parallel_run(ended=not running)
    if running:  # N = 1: the same events without the slot tag
        events = [{k: v for k, v in e.items() if k != "slot"} for e in events]
    report = build_status(_project(tmp_path, events, running=running), None, START)
    assert "lanes" not in status_json(report)["run"]
    assert "Lanes" not in render_status_text(report)


def test_forged_slots_and_features_make_no_lane_and_no_escape(tmp_path: Path) -> None:
    forged = [start(5, 7, slot, "x") for slot in (0, -2, 10**40, "1", True, 65, 2.0)]
    forged += [start(6, 8, 1, "evil\x1b]0;title\x07") | {"number": "8", "ts": ["x"]}]
    forged += [start(7, 9, 2, "x") | {"event": ["iteration_start"]}, {"run": RUN, "slot": 3}]
    events = [parallel_run()[0], *forged]
    report = build_status(_project(tmp_path, events, running=True), None, START)
    assert [(lane.slot, lane.attempt, lane.since) for lane in report.run.lanes] == [
        (1, None, None)]
    text = render_status_text(report)
    assert "- slot 1: evil\\x1b]0;title\\x07, attempt -, working since -" in text
    assert "\x1b" not in text
