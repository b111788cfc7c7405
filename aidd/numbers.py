"""The one sanitiser of numbers read from the agent or a project file (issue 27): money, token
counts, Unix times and delays come out finite, non-negative and in range, or None (unknown);
never NaN or Infinity, never an exception. A caller that refuses a value says so (`shown`).
`json_safe` keeps aidd's own JSON lines free of NaN and Infinity."""

from __future__ import annotations

import math
from typing import Any

MAX_USD = 1_000_000.0  # one attempt (or one recorded event) costing more is not a real night
MAX_TOKENS = 10**12  # tokens of one kind in one attempt; real nights use ~10**8
MAX_FRACTION = 100.0  # a quota window's utilization: 1 is the cap, usage may run a bit past it
# A Unix time in seconds up to 10**11 (year 5138: a datetime holds it, a buffer added too). A
# larger value is taken as milliseconds, as one reader of claude's docs has it, up to 10**14.
_EPOCH_S_MAX = 1e11
_EPOCH_MS_MAX = 1e14
MAX_DELAY_S = 1e10  # ~317 years: now plus this is still a datetime; the user's cap comes later
_SHOWN = 40
_INT_MAX = 1 << 1000  # float() of a larger int overflows; nothing this module keeps is near it


# `type(x) is` rather than isinstance: JSON gives exact types, a bool is no number, and the
# morning report runs these a few hundred thousand times.
def _real(value: Any) -> float | None:
    """A JSON number as a finite float: not a bool, a string, NaN, Infinity or a 400-digit int."""
    kind = type(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is int:
        return float(value) if -_INT_MAX < value < _INT_MAX else None
    return None


def _within(value: Any, top: float) -> float | None:
    number = _real(value)
    return number if number is not None and 0 <= number <= top else None


def money(value: Any) -> float | None:
    """US dollars."""
    return _within(value, MAX_USD)


def count(value: Any) -> int | None:
    """A token count (or any other count): a whole number (`12.0` is one, `2.5` is not)."""
    if type(value) is int:
        return value if 0 <= value <= MAX_TOKENS else None
    number = _within(value, MAX_TOKENS)
    return None if number is None or not number.is_integer() else int(number)


def quantity(value: Any) -> float | None:
    """A number of a unit the caller knows (dollars, tokens or seconds, as aidd wrote them)."""
    return _within(value, MAX_DELAY_S)


def fraction(value: Any) -> float | None:
    """How much of a quota window is used (1 = all of it)."""
    return _within(value, MAX_FRACTION)


def delay_s(value: Any) -> float | None:
    """A wait or a duration, in seconds."""
    return _within(value, MAX_DELAY_S)


def unix_s(value: Any) -> float | None:
    """A Unix time in seconds (a git commit's), after 1970 and before year 5138."""
    number = _real(value)
    return number if number is not None and 0 < number <= _EPOCH_S_MAX else None


def epoch_s(value: Any) -> float | None:
    """A Unix time in seconds, or in milliseconds above 10**11 (claude's `resetsAt` is in
    seconds, one reader of its docs says milliseconds; opencode's times are milliseconds)."""
    number = _real(value)
    if number is not None and _EPOCH_S_MAX < number <= _EPOCH_MS_MAX:
        return number / 1000
    return unix_s(number)


def parsed(text: str) -> float | None:
    """A number written as text (a `retry-after` header), or None; unchecked: NaN and Infinity
    come through, for the sanitiser of its kind to refuse."""
    try:
        return float(text.strip())
    except ValueError:
        return None


def shown(value: Any) -> str:
    """A refused value as a warning names it: short, one line."""
    text = " ".join(repr(value).split())
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"


def json_safe(value: Any) -> Any:
    """`value` with every NaN or Infinity (in dicts, lists and tuples) replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return value
