"""--pace-at: which quota window to wait for before the next attempt, from what the CLI last
reported of each (claude's rate_limit_event; other CLIs report none)."""

from __future__ import annotations

from collections.abc import Iterable

from aidd.agents.ratelimit import QuotaWindow


def window_to_wait_for(windows: Iterable[QuotaWindow], pace_at: int,
                       now_s: float) -> QuotaWindow | None:
    """A window used to at least `pace_at` percent that has not reset yet; of several, the one
    that resets last (waiting for an earlier one would only pause again)."""
    due = [w for w in windows if w.utilization * 100 >= pace_at and w.resets_at > now_s]
    return max(due, key=lambda w: w.resets_at, default=None) if pace_at else None
