"""`--since WHEN`: times, durations, last-run, and a one-line error for anything else."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from aidd.errors import UsageError
from aidd.reports.morning.window import LAST_RUN, choose_window, since_start

NOW = datetime(2026, 11, 25, 7, 30, tzinfo=UTC)


@pytest.mark.parametrize(("when", "back"), [
    ("12h", timedelta(hours=12)), ("90m", timedelta(minutes=90)),
    ("1h30m", timedelta(minutes=90)), ("2d", timedelta(days=2)), ("45s", timedelta(seconds=45)),
    ("3600", timedelta(hours=1)),
])
def test_a_duration_counts_back_from_now(when: str, back: timedelta) -> None:
    assert since_start(when, NOW) == NOW - back


def test_a_time_of_day_is_the_latest_one_not_in_the_future() -> None:
    assert since_start("22:00", NOW) == datetime(2026, 11, 24, 22, 0, tzinfo=UTC)
    assert since_start("07:00", NOW) == datetime(2026, 11, 25, 7, 0, tzinfo=UTC)


def test_an_iso_time_keeps_its_offset() -> None:
    assert since_start("2026-11-24T23:00+01:00", NOW) == datetime(2026, 11, 24, 22, 0,
                                                                  tzinfo=UTC)
    assert since_start("2026-11-24", NOW).date().isoformat() == "2026-11-24"


@pytest.mark.parametrize("when", ["yesterday", "12x", "25:00", "", "h", "2026-13-01"])
def test_anything_else_is_a_usage_error_naming_the_flag(when: str) -> None:
    with pytest.raises(UsageError, match=r"^--since: expected a time .* got"):
        since_start(when, NOW)


def test_a_time_in_the_future_is_refused() -> None:
    with pytest.raises(UsageError, match="in the future"):
        since_start("2027-01-01T00:00Z", NOW)


def test_last_run_is_the_default_and_without_runs_the_window_holds_every_event() -> None:
    last = NOW - timedelta(hours=3)
    assert choose_window(None, NOW, last, None).start == last
    assert choose_window(LAST_RUN, NOW, last, None).since == LAST_RUN
    first = NOW - timedelta(days=3)
    assert choose_window(None, NOW, None, first).start == first
    assert choose_window(None, NOW, None, None).start == NOW
