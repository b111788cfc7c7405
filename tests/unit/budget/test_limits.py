"""Which budget is exhausted: used reaches the limit; 0 is no budget; the first in order wins."""

from __future__ import annotations

from aidd.budget.limits import Budget, Exhausted, Limits, exhausted
from aidd.budget.spent import Spent


def test_a_budget_is_exhausted_once_the_use_reaches_it() -> None:
    limits = Limits(tokens=300)
    assert exhausted(limits, 0, Spent(299), Spent()) is None
    assert exhausted(limits, 0, Spent(300), Spent()) == Exhausted(Budget.TOKENS, 300, 300)


def test_zero_is_no_budget() -> None:
    assert exhausted(Limits(), 10**9, Spent(10**9, 10**9), Spent(10**9, 10**9)) is None


def test_each_budget_reads_its_own_figure_in_order() -> None:
    run, today = Spent(10, 1.0), Spent(100, 5.0)
    cases = [
        (Limits(wall_time_s=60), Exhausted(Budget.WALL_TIME, 60, 61)),
        (Limits(cost_usd=1.0), Exhausted(Budget.COST_USD, 1.0, 1.0)),
        (Limits(daily_tokens=100), Exhausted(Budget.DAILY_TOKENS, 100, 100)),
        (Limits(daily_cost_usd=4.5), Exhausted(Budget.DAILY_COST_USD, 4.5, 5.0)),
        (Limits(tokens=5, daily_cost_usd=4.5), Exhausted(Budget.TOKENS, 5, 10)),
    ]
    for limits, expected in cases:
        assert exhausted(limits, 61, run, today) == expected
    assert Budget.DAILY_COST_USD.flag == "--daily-max-cost-usd"
