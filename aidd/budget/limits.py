"""The run's budgets and the one rule that checks them: a budget is exhausted once what was used
reaches its limit (checked before every attempt); 0 is no budget."""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from aidd.budget.spent import Spent


class Budget(Enum):
    """`budget_exhausted.budget`; checked in this order."""

    WALL_TIME = "wall_time"
    TOKENS = "tokens"
    COST_USD = "cost_usd"
    DAILY_TOKENS = "daily_tokens"
    DAILY_COST_USD = "daily_cost_usd"

    @property
    def flag(self) -> str:
        return {"wall_time": "--max-wall-time", "tokens": "--max-tokens",
                "cost_usd": "--max-cost-usd", "daily_tokens": "--daily-max-tokens",
                "daily_cost_usd": "--daily-max-cost-usd"}[self.value]

    @property
    def dollars(self) -> bool:
        return self in (Budget.COST_USD, Budget.DAILY_COST_USD)


class Limits(NamedTuple):
    wall_time_s: float = 0
    tokens: int = 0
    cost_usd: float = 0
    daily_tokens: int = 0
    daily_cost_usd: float = 0

    @property
    def daily(self) -> bool:
        return bool(self.daily_tokens or self.daily_cost_usd)


class Exhausted(NamedTuple):
    budget: Budget
    limit: float
    used: float


def exhausted(limits: Limits, wall_s: float, run: Spent, today: Spent) -> Exhausted | None:
    """The first budget used up: `wall_s` seconds since the run began, what this run's attempts
    used, and what the project's runs used today (this one included)."""
    checks = ((Budget.WALL_TIME, limits.wall_time_s, wall_s),
              (Budget.TOKENS, limits.tokens, run.tokens),
              (Budget.COST_USD, limits.cost_usd, run.cost_usd),
              (Budget.DAILY_TOKENS, limits.daily_tokens, today.tokens),
              (Budget.DAILY_COST_USD, limits.daily_cost_usd, today.cost_usd))
    for budget, limit, used in checks:
        if limit and used >= limit:
            return Exhausted(budget, limit, used)
    return None
