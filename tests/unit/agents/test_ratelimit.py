"""Reset times from every source and form (ADP-45, ADP-46)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from aidd.agents.ratelimit import (
    RateLimitInfo,
    WakeSource,
    find_reset,
    parse_reset_text,
    wake_time,
)

BERLIN = ZoneInfo("Europe/Berlin")
LOCAL = timezone(timedelta(hours=-5), "EST")  # the user's zone in these tests
NOW = datetime(2026, 3, 8, 13, 30, tzinfo=LOCAL)  # 13:30 local = 18:30 UTC = 19:30 Berlin


def at(hour: int, minute: int = 0, day: int = 8, zone: timezone | ZoneInfo = LOCAL) -> datetime:
    return datetime(2026, 3, day, hour, minute, tzinfo=zone)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("You've hit your limit · resets 2am", at(2, day=9)),
        ("resets 2:30pm", at(14, 30)),
        ("Usage limit. Resets 9 AM", at(9, day=9)),
        ("resets 9 a.m.", at(9, day=9)),
        ("resets 12am", at(0, day=9)),
        ("resets 12pm", at(12, day=9)),
        ("resets 1:30PM", at(13, 30, day=9)),  # already past today: tomorrow
        ("resets 2:30pm (Europe/Berlin)", at(14, 30, day=9, zone=BERLIN)),
        ("You've hit your limit · resets 2am (Europe/Berlin)", at(2, day=9, zone=BERLIN)),
        ("resets 11pm (Europe/Berlin)", at(23, zone=BERLIN)),  # later today in Berlin
        ("resets 2am (Mars/Olympus)", at(2, day=9)),  # unknown zone: local
        ("resets 14:00", at(14)),
        ("resets at 14:00", at(14)),
        ("resets 09:15", at(9, 15, day=9)),
        ("resets 2026-03-08T14:00:00Z", datetime(2026, 3, 8, 14, tzinfo=UTC)),
        ("resets 2026-03-09T01:00:00+01:00",
         datetime(2026, 3, 9, 1, tzinfo=timezone(timedelta(hours=1)))),
        ("Claude AI usage limit reached|1741442400", datetime.fromtimestamp(1741442400, LOCAL)),
        ("try again in 5 minutes", NOW + timedelta(minutes=5)),
        ("Rate limited, in 2 hours", NOW + timedelta(hours=2)),
        ("retry in 30s", NOW + timedelta(seconds=30)),
        ("rate limit exceeded", None),
        ("resets 25:00", None),
        ("resets 13pm", None),
        ("", None),
    ],
)
def test_message_forms(text: str, expected: datetime | None) -> None:
    assert parse_reset_text(text, NOW, LOCAL) == expected


def test_day_roll_over_at_midnight() -> None:
    late = datetime(2026, 12, 31, 23, 59, tzinfo=LOCAL)
    assert parse_reset_text("resets 12:30am", late, LOCAL) == datetime(2027, 1, 1, 0, 30,
                                                                        tzinfo=LOCAL)


@pytest.mark.parametrize(
    ("info", "reset", "source"),
    [
        (RateLimitInfo(resets_at=1_773_000_000, retry_after="30", message="resets 2am"),
         datetime.fromtimestamp(1_773_000_000, LOCAL), WakeSource.RATE_LIMIT_EVENT),
        (RateLimitInfo(retry_after="30", message="resets 2am"),
         NOW + timedelta(seconds=30), WakeSource.RETRY_AFTER),
        (RateLimitInfo(retry_after_ms="1500", retry_after="30"),
         NOW + timedelta(seconds=1.5), WakeSource.RETRY_AFTER),
        (RateLimitInfo(retry_after="Sun, 08 Mar 2026 19:00:00 GMT"),
         datetime(2026, 3, 8, 19, tzinfo=UTC), WakeSource.RETRY_AFTER),
        (RateLimitInfo(retry_after="soon", message="resets 14:00"), at(14), WakeSource.MESSAGE),
        (RateLimitInfo(message="slow down"), None, WakeSource.FALLBACK),
        (RateLimitInfo(), None, WakeSource.FALLBACK),
    ],
)
def test_sources_first_found_wins(info: RateLimitInfo, reset: datetime | None,
                                  source: WakeSource) -> None:
    assert find_reset(info, NOW, LOCAL)[:2] == (reset, source)


def test_wake_is_reset_plus_buffer() -> None:
    wake = wake_time(RateLimitInfo(message="resets 14:00"), NOW, LOCAL, 60, 300)
    assert wake.at == at(14, 1)
    assert wake.reset == at(14)
    assert wake.source is WakeSource.MESSAGE
    assert wake.seconds_from(NOW) == 31 * 60


def test_a_reset_already_past_gives_the_buffer_alone() -> None:
    info = RateLimitInfo(resets_at=NOW.timestamp() - 600)
    wake = wake_time(info, NOW, LOCAL, 60, 300)
    assert wake.at == NOW + timedelta(seconds=60)
    assert wake.source is WakeSource.RATE_LIMIT_EVENT


def test_nothing_parsable_gives_the_fallback() -> None:
    wake = wake_time(RateLimitInfo(message="x" * 500), NOW, LOCAL, 60, 300)
    assert (wake.at, wake.source, wake.reset) == (NOW + timedelta(seconds=300),
                                                  WakeSource.FALLBACK, None)
    assert len(wake.message) == 200


def test_merge_keeps_the_first_value_of_each_kind() -> None:
    first = RateLimitInfo(resets_at=1.0, message="a")
    merged = first.merged(RateLimitInfo(resets_at=2.0, retry_after="5", message="b"))
    assert merged == RateLimitInfo(resets_at=1.0, retry_after="5", message="a")


# -- reset hints are numbers from the agent (issue 27) -------------------------------------------
@pytest.mark.parametrize("forged", [1e20, float("nan"), float("inf"), -5.0, 0.0])
def test_a_reset_that_is_no_time_falls_back_with_a_note(forged: float) -> None:
    """Before: 1e20 and NaN raised OverflowError or ValueError out of the session runner."""
    wake = wake_time(RateLimitInfo(resets_at=forged, message="slow down"), NOW, LOCAL, 60, 300)
    assert (wake.source, wake.at) == (WakeSource.FALLBACK, NOW + timedelta(seconds=300))
    assert len(wake.notes) == 1
    assert wake.notes[0].startswith("resetsAt ")
    assert wake.notes[0].endswith(" is not a time")


def test_a_reset_centuries_away_gives_a_wake_and_no_overflow() -> None:
    far = wake_time(RateLimitInfo(resets_at=99_999_999_999), NOW, LOCAL, 60, 300)
    assert far.source is WakeSource.RATE_LIMIT_EVENT
    assert far.at.year > 2300  # the run caps the sleep (--rate-limit-max-sleep), not this
    text = wake_time(RateLimitInfo(message="resets at 9999-12-31T23:59:59Z"), NOW, LOCAL, 60, 0)
    assert text.source is WakeSource.MESSAGE
    huge = wake_time(RateLimitInfo(message="try again in 99999999999999999999 hours"),
                     NOW, LOCAL, 60, 300)
    assert huge.source is WakeSource.FALLBACK


@pytest.mark.parametrize(("headers", "note"), [
    ({"retry_after": "1e400"}, "retry-after '1e400' is not a delay"),
    ({"retry_after": "nan"}, "retry-after 'nan' is not a delay"),
    ({"retry_after": "-30"}, "retry-after '-30' is not a delay"),
    ({"retry_after_ms": "-1", "retry_after": "x"}, "retry-after-ms '-1' is not a delay"),
])
def test_an_impossible_retry_after_falls_back_with_a_note(headers: dict[str, str],
                                                           note: str) -> None:
    wake = wake_time(RateLimitInfo(**headers), NOW, LOCAL, 60, 300)
    assert wake.source is WakeSource.FALLBACK
    assert wake.notes == (note,)


def test_a_bad_retry_after_ms_leaves_retry_after_to_decide() -> None:
    wake = wake_time(RateLimitInfo(retry_after_ms="inf", retry_after="30"), NOW, LOCAL, 0, 300)
    assert (wake.source, wake.at) == (WakeSource.RETRY_AFTER, NOW + timedelta(seconds=30))
    assert wake.notes == ("retry-after-ms 'inf' is not a delay",)


def test_a_reset_already_past_waits_the_buffer_with_a_note() -> None:
    wake = wake_time(RateLimitInfo(resets_at=NOW.timestamp() - 600), NOW, LOCAL, 60, 300)
    assert wake.at == NOW + timedelta(seconds=60)
    assert "is already past" in wake.notes[0]


def test_an_http_date_without_a_zone_is_utc() -> None:
    wake = wake_time(RateLimitInfo(retry_after="Sun, 08 Mar 2026 19:00:00 -0000"), NOW, LOCAL,
                     0, 300)
    assert wake.at == datetime(2026, 3, 8, 19, tzinfo=UTC)
