"""A whole night, built once per module that asks for it (its git runs take about a second)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest

from aidd.reports.morning.build import build_report
from aidd.reports.morning.record import MorningReport
from tests.unit.reports.night import Night

SINCE = "2026-11-24T21:59:00Z"


def rich_night(root: Path) -> Night:
    """Two runs: a long one that passes a feature with a commit, struggles with another,
    passes and loses a third, sleeps on a rate limit and a pace, turns its gate red and runs
    out of budget; then a run that dies of a fatal error after 71 s."""
    night = Night(root)
    night.start_run(4242)
    night.emit("gate_baseline", number=1, commands=[{"name": "pytest", "ok": True}],
               duration_s=2)
    night.attempt(kind="initializer", features={"a": False, "b": False, "c": False})
    night.attempt(features={"a": True}, files={"src/a.py": "a = 1\n"}, commit="feat: a works")
    night.emit("gate", number=2, name="pytest", ok=True, new_failures=0, known_failures=0,
               new=[])
    night.attempt(71, reason="idle_timeout", features={"b": False}, cost=None, seconds=900)
    night.attempt(74, outcome="rate_limited", reason="rate_limited", cost=0.0, seconds=30)
    night.emit("rate_limit_sleep", number=4, seconds=1800.0, source="retry_after")
    night.clock.advance(1800)
    night.attempt(features={"b": False}, cost=0.25, estimated=True)
    night.emit("gate", number=5, name="pytest", ok=False, new_failures=2, known_failures=1,
               new=["tests/test_b.py::test_one", "tests/test_b.py::test_two"])
    night.attempt(72, reason="provider_error", features={"b": False})
    night.attempt(features={"c": True}, files={"src/c.py": "c = 3\n" * 10})
    night.attempt(features={"c": False}, files={"src/a.py": "a = 2\n"})
    night.emit("pace", number=9, utilization=0.91, window="five_hour", seconds=600.0)
    night.clock.advance(600)
    night.emit("budget_exhausted", budget="cost_usd", limit=3.0, used=3.25)
    night.end_run("budget", 9)
    night.clock.advance(3600)
    night.start_run(4343)
    night.attempt(1, outcome="fatal", reason="fatal", seconds=60, cost=None,
                  tokens={"input": 10})
    night.end_run("fatal", 8, duration=71.0)
    night.clock.advance(3600)
    return night


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Night:
    return rich_night(tmp_path_factory.mktemp("night"))


@pytest.fixture(scope="module")
def report(night: Night) -> MorningReport:
    return build_report(night.paths, SINCE, night.clock.now() + timedelta(hours=1), os.environ)
