"""Time: the Clock protocol every wait goes through, and the real clock (STYLE 4)."""

from __future__ import annotations

import re
import time
from datetime import datetime
from typing import Protocol


class Clock(Protocol):
    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...

    def now(self) -> datetime:
        """Aware local time."""
        ...


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def now(self) -> datetime:
        return datetime.now().astimezone()


_DURATION_RE = re.compile(r"(?:([0-9]+)d)?(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?")


def parse_duration(text: str) -> int | None:
    """Seconds, from `8h`, `90m`, `1h30m`, `45s`, `2d` or a bare number of seconds; None when
    `text` is none of these (`1h30` is ambiguous: none). One grammar for every flag."""
    text = text.strip().lower()
    if text.isascii() and text.isdigit():
        return int(text)
    match = _DURATION_RE.fullmatch(text)
    if not text or match is None:
        return None
    days, hours, minutes, seconds = (int(part or 0) for part in match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds
