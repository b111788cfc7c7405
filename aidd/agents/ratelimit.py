"""When a rate limit ends: a pure function of (signals, now, zone) (ADP-45, ADP-46, SUP-51)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from enum import Enum
from typing import NamedTuple

from aidd.numbers import MAX_DELAY_S, delay_s, epoch_s, parsed, shown


class RateLimitInfo(NamedTuple):
    """Reset hints gathered from one attempt; the first value of each kind wins."""

    resets_at: float | None = None  # claude rate_limit_info.resetsAt, Unix seconds (unchecked)
    retry_after: str | None = None  # `retry-after` header: seconds or an HTTP date
    retry_after_ms: str | None = None  # `retry-after-ms` header
    message: str = ""  # the limit message of the CLI or provider

    def merged(self, other: RateLimitInfo) -> RateLimitInfo:
        return self._replace(
            resets_at=self.resets_at if self.resets_at is not None else other.resets_at,
            retry_after=self.retry_after or other.retry_after,
            retry_after_ms=self.retry_after_ms or other.retry_after_ms,
            message=self.message or other.message,
        )


class QuotaWindow(NamedTuple):
    """A provider quota window as the CLI reports it (claude's `rate_limit_event`): how much of
    it is used and when it resets. `--pace-at` reads these."""

    name: str  # e.g. five_hour, seven_day
    utilization: float  # the fraction used; may pass 1 when usage runs past the cap
    resets_at: float  # Unix seconds


class WakeSource(Enum):
    """`rate_limit_sleep.source` (LOG-42)."""

    RATE_LIMIT_EVENT = "rate_limit_event"
    RETRY_AFTER = "retry_after"
    MESSAGE = "message"
    FALLBACK = "fallback"


class Wake(NamedTuple):
    at: datetime  # aware
    source: WakeSource
    reset: datetime | None  # the parsed reset time, before the buffer
    message: str  # the limit message, at most 200 characters
    # Reset hints aidd could not use (NaN, 1e20, negative, already past), each said once as a
    # warning; the wake then comes from the next source, or the fallback (issue 27).
    notes: tuple[str, ...] = ()

    def seconds_from(self, now: datetime) -> float:
        return max(0.0, (self.at - now).total_seconds())


def wake_time(
    info: RateLimitInfo, now: datetime, zone: tzinfo, buffer_s: float, fallback_s: float
) -> Wake:
    """Reset + buffer; a reset already past gives the buffer alone; nothing parsable, fallback.
    A reset however far away gives a wake a datetime holds; the run caps the sleep itself
    (--rate-limit-max-sleep)."""
    reset, source, notes = find_reset(info, now, zone)
    message = info.message[:200]
    if reset is None:
        at = now + timedelta(seconds=fallback_s)
        return Wake(at, WakeSource.FALLBACK, None, message, notes)
    ahead = min(max(0.0, (reset - now).total_seconds()), MAX_DELAY_S)
    if reset < now:
        notes += (f"the reset time {reset.isoformat()} ({source.value}) is already past",)
    return Wake(now + timedelta(seconds=ahead + buffer_s), source, reset, message, notes)


def find_reset(
    info: RateLimitInfo, now: datetime, zone: tzinfo
) -> tuple[datetime | None, WakeSource, tuple[str, ...]]:
    """The reset instant and where it came from; the first source found wins (ADP-45). The
    numbers come from the agent's output: each goes through the sanitiser, and one refused is
    noted, never a crash."""
    notes: tuple[str, ...] = ()
    if info.resets_at is not None:
        stamp = epoch_s(info.resets_at)
        if stamp is not None:
            return datetime.fromtimestamp(stamp, zone), WakeSource.RATE_LIMIT_EVENT, ()
        notes = (f"resetsAt {shown(info.resets_at)} is not a time",)
    header, refused = _from_headers(info, now)
    notes += refused
    if header is not None:
        return header, WakeSource.RETRY_AFTER, notes
    text = parse_reset_text(info.message, now, zone)
    return text, (WakeSource.MESSAGE if text is not None else WakeSource.FALLBACK), notes


def _from_headers(info: RateLimitInfo, now: datetime) -> tuple[datetime | None, tuple[str, ...]]:
    notes: tuple[str, ...] = ()
    for name, text, unit in (("retry-after-ms", info.retry_after_ms, 1000),
                             ("retry-after", info.retry_after, 1)):
        if not text:
            continue
        number = parsed(text)
        if number is None and unit == 1:
            return _http_date(text), notes
        seconds = None if number is None else delay_s(number / unit)
        if seconds is not None:
            return now + timedelta(seconds=seconds), notes
        notes += (f"{name} {shown(text)} is not a delay",)
    return None, notes


def _http_date(text: str) -> datetime | None:
    from email.utils import parsedate_to_datetime  # lazy: email and socket, ~8 ms a start

    try:
        when = parsedate_to_datetime(text.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)  # `-0000`: UTC


# Patterns, compiled by `re` at their first use (its cache): a run that meets no rate limit
# never compiles them (5 ms of a start, issue 33).
_EPOCH = r"\|\s*(\d{9,11})\b"
_ISO = r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})"
_RELATIVE = r"\bin\s+(\d+(?:\.\d+)?)\s*(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h)\b"
_TWELVE = r"\b(\d{1,2})(?::(\d{2}))?\s?([ap])\.?m\b\.?(?:\s*\(([^)\s]+)\))?"
_TWENTY_FOUR = (
    r"\b(?:resets?|at|until)\s+(?:at\s+)?([01]?\d|2[0-3]):([0-5]\d)\b(?:\s*\(([^)\s]+)\))?")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}


def parse_reset_text(text: str, now: datetime, zone: tzinfo) -> datetime | None:
    """The reset instant a limit message announces, or None (forms of ADP-45)."""
    for parse in (_epoch, _iso, _relative, _twelve_hour, _twenty_four_hour):
        found = parse(text, now, zone)
        if found is not None:
            return found
    return None


def _epoch(text: str, now: datetime, zone: tzinfo) -> datetime | None:
    match = re.search(_EPOCH, text)
    stamp = epoch_s(int(match.group(1))) if match else None
    return None if stamp is None else datetime.fromtimestamp(stamp, zone)


def _iso(text: str, now: datetime, zone: tzinfo) -> datetime | None:
    match = re.search(_ISO, text, re.I)
    if not match:
        return None
    try:
        return datetime.fromisoformat(match.group(0).replace(" ", "T"))
    except ValueError:
        return None


def _relative(text: str, now: datetime, zone: tzinfo) -> datetime | None:
    match = re.search(_RELATIVE, text, re.I)
    if not match:
        return None
    unit = match.group(2).lower()[0]
    seconds = delay_s(float(match.group(1)) * _UNIT_SECONDS[unit])  # "in 1e30 hours": none
    return None if seconds is None else now + timedelta(seconds=seconds)


def _twelve_hour(text: str, now: datetime, zone: tzinfo) -> datetime | None:
    match = re.search(_TWELVE, text, re.I)
    if not match:
        return None
    hour = int(match.group(1))
    if not 1 <= hour <= 12:
        return None
    hour = hour % 12 + (12 if match.group(3).lower() == "p" else 0)
    return _next_occurrence(now, hour, int(match.group(2) or 0), _zone(match.group(4), zone))


def _twenty_four_hour(text: str, now: datetime, zone: tzinfo) -> datetime | None:
    match = re.search(_TWENTY_FOUR, text, re.I)
    if not match:
        return None
    return _next_occurrence(
        now, int(match.group(1)), int(match.group(2)), _zone(match.group(3), zone)
    )


def _zone(name: str | None, local: tzinfo) -> tzinfo:
    """An IANA zone named in the message; unknown or absent: local time."""
    if not name:
        return local
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # lazy: ~5 ms a start, rarely named

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return local


def _next_occurrence(now: datetime, hour: int, minute: int, zone: tzinfo) -> datetime:
    """The first wall-clock hour:minute in `zone` after `now` (today or tomorrow)."""
    today: date = now.astimezone(zone).date()
    for offset in (0, 1, 2):
        candidate = datetime.combine(today + timedelta(days=offset), time(hour, minute), zone)
        if candidate > now:
            return candidate
    return candidate
