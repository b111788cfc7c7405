"""aidd/numbers.py, the one sanitiser of numbers from the agent or a project file (issue 27):
finite, non-negative, in range, else None; never an exception."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from aidd.numbers import (
    MAX_DELAY_S,
    MAX_TOKENS,
    MAX_USD,
    count,
    delay_s,
    epoch_s,
    fraction,
    json_safe,
    money,
    parsed,
    quantity,
    shown,
    unix_s,
)

NOT_NUMBERS = [None, True, False, "1", [1], {"a": 1}, math.nan, math.inf, -math.inf, 10**400]


@pytest.mark.parametrize("read", [money, count, fraction, delay_s, epoch_s, unix_s, quantity])
@pytest.mark.parametrize("value", NOT_NUMBERS)
def test_what_is_no_finite_number_is_none(read: Any, value: Any) -> None:
    assert read(value) is None


@pytest.mark.parametrize("read", [money, count, fraction, delay_s, epoch_s, unix_s, quantity])
def test_negative_is_none(read: Any) -> None:
    assert read(-1) is None
    assert read(-0.001) is None


def test_each_kind_has_its_range() -> None:
    assert money(0) == 0.0
    assert money(12.5) == 12.5
    assert money(MAX_USD) == MAX_USD
    assert money(MAX_USD * 2) is None
    assert count(12) == 12
    assert count(12.0) == 12
    assert count(2.5) is None  # a count is whole
    assert count(MAX_TOKENS + 1) is None
    assert fraction(0.85) == 0.85
    assert fraction(1e9) is None
    assert delay_s(30) == 30.0
    assert delay_s(MAX_DELAY_S * 10) is None


def test_a_unix_time_in_seconds_or_milliseconds() -> None:
    assert epoch_s(1_773_000_000) == 1_773_000_000
    assert epoch_s(1_773_000_000_500) == 1_773_000_000.5  # milliseconds, as one doc has it
    assert epoch_s(0) is None
    assert epoch_s(1e20) is None  # neither: no datetime holds it
    assert unix_s(1_773_000_000_500) is None  # a git commit time is in seconds only
    assert unix_s(1_773_000_000) == 1_773_000_000


def test_text_numbers_are_parsed_but_not_yet_checked() -> None:
    assert parsed(" 30 ") == 30.0
    assert parsed("soon") is None
    assert math.isnan(parsed("nan") or 0.0)  # for delay_s and its kind to refuse
    assert delay_s(parsed("1e400")) is None


def test_a_refused_value_is_shown_short_on_one_line() -> None:
    assert shown(math.nan) == "nan"
    assert shown("a\nb") == "'a\\nb'"
    assert len(shown(10**400)) == 41


def test_json_safe_drops_every_non_finite_float() -> None:
    record = {"a": math.nan, "b": [1.5, math.inf, {"c": -math.inf}], "d": (2, "x"), "e": None}
    safe = json_safe(record)
    assert safe == {"a": None, "b": [1.5, None, {"c": None}], "d": [2, "x"], "e": None}
    json.dumps(safe, allow_nan=False)
