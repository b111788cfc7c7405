"""The run's budgets (issue 16): what its attempts used, and what the project's runs used today,
checked before every attempt (exit 9); the wall-time deadline that stops an attempt in flight;
and the quota windows the CLI reported, for --pace-at."""

from __future__ import annotations

from datetime import UTC, date

from aidd.agents.ratelimit import QuotaWindow
from aidd.budget.limits import Budget, Exhausted, Limits, exhausted
from aidd.budget.pacing import window_to_wait_for
from aidd.budget.spent import Spent, spent_on
from aidd.clock import Clock
from aidd.errors import ExitCode
from aidd.run.iteration import Attempt
from aidd.run.journal import Journal
from aidd.run.outcomes import Counters, EndReason, RunEnd, format_cost, format_duration
from aidd.run.preflight import RunPlan


class BudgetKeeper:
    def __init__(self, plan: RunPlan, journal: Journal, clock: Clock) -> None:
        s = plan.settings
        self.journal = journal
        self.clock = clock
        self.limits = Limits(s.max_wall_time or 0, s.max_tokens or 0, s.max_cost_usd or 0.0,
                             s.daily_max_tokens or 0, s.daily_max_cost_usd or 0.0)
        self.pace_at = s.pace_at or 0
        self.started_s = clock.monotonic()
        self.deadline_s = self.started_s + s.max_wall_time if s.max_wall_time else None
        self._days: dict[date, Spent] = {}  # this project's use per local day, this run's too
        if self.limits.daily:  # one read of the events at start; this run adds its own
            now = clock.now()
            self._days[now.date()] = spent_on(plan.paths.events, now.date(), now.tzinfo or UTC)
        self._windows: dict[str, tuple[int, QuotaWindow]] = {}  # the newest reading, by whom
        # An attempt whose cost figure the sanitiser refused and nothing could estimate: its
        # number and that figure. A cost budget cannot be kept past it (issue 27).
        self._unpriced: tuple[int, str] | None = None

    def spent(self, attempt: Attempt, counters: Counters) -> None:
        """After every attempt, a rate-limited one too: its tokens were used as well."""
        out, cost = attempt.outcome, attempt.cost
        counters.add_usage(out.tokens, cost.usd, cost.estimated)
        today = self.clock.now().date()
        self._days[today] = self._days.get(today, Spent()).plus(out.tokens, cost.usd,
                                                                cost.estimated)
        for window in out.quota:
            self._windows[window.name] = (attempt.number, window)
        if cost.usd is None and cost.refused is not None and self._unpriced is None:
            self._unpriced = (attempt.number, cost.refused)

    def check(self, counters: Counters) -> RunEnd | None:
        """Before every attempt: the first budget used up ends the run with 9."""
        run = Spent().plus(counters.tokens, counters.cost_usd, counters.cost_estimated)
        today = self._days.get(self.clock.now().date(), Spent())
        found = exhausted(self.limits, self.clock.monotonic() - self.started_s, run, today)
        if found is None:
            return self._unpriced_end()
        used = _shown(found, run if found.budget is Budget.COST_USD else today)
        self.journal.say(f"budget exhausted: {found.budget.flag} {_limit(found)} reached "
                         f"({used}); exiting with 9", level="ERROR")
        self.journal.events.emit("budget_exhausted", budget=found.budget.value,
                                 limit=found.limit, used=round(found.used, 6),
                                 unknown_cost_of=None)
        return RunEnd(ExitCode.BUDGET_EXHAUSTED, EndReason.BUDGET,
                      f"{found.budget.flag} {_limit(found)} reached")

    def _unpriced_end(self) -> RunEnd | None:
        """A cost budget and an attempt of unknown cost whose CLI sent an impossible figure
        (NaN, negative, huge): the budget can no longer be kept, so the run ends as if it were
        used up. An honest unknown (no figure, no price) only leaves the cost uncounted."""
        budget = Budget.COST_USD if self.limits.cost_usd else Budget.DAILY_COST_USD
        limit = self.limits.cost_usd or self.limits.daily_cost_usd
        if self._unpriced is None or not limit:
            return None
        number, figure = self._unpriced
        self.journal.say(f"budget exhausted: {budget.flag} {limit:.2f} cannot be kept: attempt "
                         f"{number:03d} reported the cost {figure}, and no price is known for its "
                         "model; exiting with 9", level="ERROR")
        self.journal.events.emit("budget_exhausted", budget=budget.value, limit=limit,
                                 used=None, unknown_cost_of=number)
        return RunEnd(ExitCode.BUDGET_EXHAUSTED, EndReason.BUDGET,
                      f"{budget.flag} {limit:.2f} cannot be kept (cost of {number:03d} unknown)")

    def pace_due(self) -> tuple[int, QuotaWindow] | None:
        """--pace-at: the attempt that reported a window used past the mark, and the window.
        A reading is paused for once: a pause cut by --rate-limit-max-sleep does not repeat
        until an attempt reports the window again."""
        windows = (window for _, window in self._windows.values())
        due = window_to_wait_for(windows, self.pace_at, self.clock.now().timestamp())
        return None if due is None else (self._windows.pop(due.name)[0], due)


def _limit(found: Exhausted) -> str:
    if found.budget is Budget.WALL_TIME:
        return format_duration(found.limit)
    return f"{found.limit:.2f}" if found.budget.dollars else f"{found.limit:.0f}"


def _shown(found: Exhausted, spent: Spent) -> str:
    if found.budget is Budget.WALL_TIME:
        return f"{format_duration(found.used)} since the start"
    if found.budget.dollars:
        return f"{format_cost(found.used, spent.estimated)} used"
    return f"{found.used:.0f} tokens used"
