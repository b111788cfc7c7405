"""How the morning report writes a figure, one function each, used by the text and the HTML
alike (so they agree), `clean` for every string that came from the project, and the readers
of an untrusted event's fields (`integer`, `text`; numbers go through aidd.numbers)."""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any, Protocol

from aidd.console import shown


class CostKnown(Protocol):
    """What `cost` reads of the report's usage (record.Usage): fmt stays below the record."""

    @property
    def total_usd(self) -> float: ...
    @property
    def known_cost(self) -> int: ...
    @property
    def unknown_cost(self) -> int: ...


@functools.lru_cache(maxsize=4096)  # reasons, kinds and run ids repeat thousands of times
def clean(value: str, limit: int = 200) -> str:
    if len(value) <= limit and value.isprintable():  # no control, surrogate or format char
        return value
    text = shown(value, one_line=True)  # a terminal escape in a feature title, say
    return text if len(text) <= limit else text[:limit - 1] + "…"


# `type(x) is int` rather than isinstance: JSON gives exact types, a bool is no number, and
# these run a few hundred thousand times a report.
def integer(value: Any) -> int | None:
    return value if type(value) is int else None


def text(value: Any, limit: int = 200) -> str | None:
    """A string field, made safe to show (`fmt.clean`)."""
    return clean(value, limit) if type(value) is str else None


def attempt(number: int | None) -> str:
    return "-" if number is None else f"{number:03d}"


def count(value: int) -> str:
    return f"{value:,}"


def usd(value: float) -> str:
    """Cents from ten cents up; below, four decimals (a cheap model's attempt costs less)."""
    return f"${value:,.2f}" if value >= 0.1 or value == 0 else f"${value:.4f}"


def cost(usage: CostKnown) -> str:
    """The window's cost as far as it is known: `unknown` when no attempt named one (a model
    without a price), never $0.00; at least the known sum when some attempts named none."""
    if not usage.unknown_cost:
        return usd(usage.total_usd)
    if not usage.known_cost:
        return "unknown"
    return f"≥ {usd(usage.total_usd)}, some unknown"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    total = round(seconds)
    if total < 60:
        return f"{seconds:.1f}s" if seconds < 10 else f"{total}s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes}m {secs}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes}m"


def stamp(moment: datetime | None) -> str:
    """Local time, to the second: the user reads the report where they live."""
    return "-" if moment is None else moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def clock(moment: datetime) -> str:
    return moment.astimezone().strftime("%H:%M")


def iso(moment: datetime | None) -> str | None:
    """For JSON: the time with its offset, to the millisecond."""
    return None if moment is None else moment.isoformat(timespec="milliseconds")


def change(added: int | None, deleted: int | None) -> str:
    return "binary" if added is None or deleted is None else f"+{added} -{deleted}"


def short(moment: datetime | None) -> str:
    """Month, day and minute, local: a table column."""
    return "-" if moment is None else moment.astimezone().strftime("%m-%d %H:%M")


def plural(n: int, word: str) -> str:
    return f"{count(n)} {word}{'' if n == 1 else 's'}"


TOKEN_LABELS = {"input": "input", "output": "output", "reasoning": "reasoning",
                "cache_read": "cache read", "cache_write": "cache write"}
