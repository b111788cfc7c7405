"""--pace-at: the quota window to wait for."""

from __future__ import annotations

from aidd.agents.ratelimit import QuotaWindow
from aidd.budget.pacing import window_to_wait_for

NOW = 1_800_000_000.0
FIVE = QuotaWindow("five_hour", 0.85, NOW + 3600)
WEEK = QuotaWindow("seven_day", 0.95, NOW + 86400)


def test_a_window_used_past_the_mark_and_not_reset_yet() -> None:
    assert window_to_wait_for([FIVE], 80, NOW) == FIVE
    assert window_to_wait_for([FIVE], 85, NOW) == FIVE
    assert window_to_wait_for([FIVE], 86, NOW) is None
    assert window_to_wait_for([FIVE], 80, NOW + 3600) is None  # it has reset


def test_of_several_the_one_resetting_last() -> None:
    assert window_to_wait_for([FIVE, WEEK], 80, NOW) == WEEK
    assert window_to_wait_for([FIVE, WEEK], 90, NOW) == WEEK
    assert window_to_wait_for([FIVE, QuotaWindow("seven_day", 0.5, NOW + 86400)], 80,
                              NOW) == FIVE


def test_zero_is_off() -> None:
    assert window_to_wait_for([QuotaWindow("five_hour", 1.0, NOW + 60)], 0, NOW) is None
