"""`--since WHEN`: a time (`2026-11-24T22:00`, `22:00`), a duration back from now (`12h`,
`90m`, `1h30m`, `2d`, seconds) or `last-run`, the default: the start of the newest run."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from aidd.clock import parse_duration
from aidd.errors import UsageError, shown
from aidd.reports.morning.record import Window

LAST_RUN = "last-run"
_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})$")
_HELP = ("expected a time (2026-11-24T22:00, 22:00), a duration (12h, 90m, 1h30m) or "
         f"{LAST_RUN}")


def check_since(value: str | None, now: datetime) -> None:
    """Exit 2 at once, before anything is read, for a WHEN that means nothing."""
    if value is not None and value != LAST_RUN:
        since_start(value, now)


def choose_window(value: str | None, now: datetime, last_run: datetime | None,
                  first_event: datetime | None) -> Window:
    """The report's window, ending now. `last-run` with no run in the events: all of them."""
    if value is None or value == LAST_RUN:
        start = last_run or first_event or now
        return Window(min(start, now), now, LAST_RUN)
    return Window(since_start(value, now), now, value)


def since_start(value: str, now: datetime) -> datetime:
    text = value.strip()
    start = _duration(text, now) or _clock_time(text, now) or _iso_time(text)
    if start is None:
        raise UsageError(f"--since: {_HELP}, got {shown(value)}")
    if start > now:
        raise UsageError(f"--since: {shown(value)} is in the future")
    return start


def _duration(text: str, now: datetime) -> datetime | None:
    seconds = parse_duration(text)
    try:
        return None if seconds is None else now - timedelta(seconds=seconds)
    except OverflowError:  # further back than any calendar: not a window
        return None


def _clock_time(text: str, now: datetime) -> datetime | None:
    """`22:00`: the latest such local time that is not in the future (last night's)."""
    match = _CLOCK.match(text)
    if match is None:
        return None
    hour, minute = int(match.group(1)), int(match.group(2))
    if hour > 23 or minute > 59:
        return None
    today = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    return today if today <= now else today - timedelta(days=1)


def _iso_time(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    # A time without an offset is the user's local time (astimezone() reads it so).
    return moment if moment.tzinfo is not None else moment.astimezone()
