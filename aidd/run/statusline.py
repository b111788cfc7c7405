"""`--console compact`'s status line (issue 30): the run's events folded into one line,
iteration, elapsed, liveness, cost and features, that the console keeps at the bottom of a
terminal. A listener of the run's EventLog: it only stores values, and `text` only reads them."""

from __future__ import annotations

from typing import Any

from aidd import numbers
from aidd.clock import Clock
from aidd.reports.status import features_left
from aidd.run.journal import Journal
from aidd.run.preflight import RunPlan


class StatusLine:
    def __init__(self, plan: RunPlan, clock: Clock) -> None:
        self._plan = plan
        self._clock = clock
        self._started = clock.monotonic()
        self._iteration = "starting"
        self._liveness = ""
        self._cost = 0.0
        self._features = ""

    def attach(self, journal: Journal) -> None:
        """From now on the console is compact and keeps this line."""
        self._count_features()
        journal.events.listeners.append(self._on_event)
        journal.console.compact = True
        journal.console.keep_status(self.text)

    def text(self) -> str:
        whole = int(self._clock.monotonic() - self._started)
        elapsed = f"{whole // 3600}h{whole // 60 % 60:02d}m{whole % 60:02d}s"
        parts = [self._iteration, elapsed, self._liveness, f"${self._cost:.2f}", self._features]
        return "[aidd] " + " · ".join(part for part in parts if part)

    def _on_event(self, record: dict[str, Any]) -> None:
        name = record.get("event")
        if name == "iteration_start":
            of = record.get("of")
            self._iteration = f"iteration {record.get('index')}" + (f" of {of}" if of else "")
            self._liveness = "active"
        elif name == "liveness":
            self._liveness = str(record.get("state") or "")
        elif name == "iteration_end":
            self._cost += numbers.money(record.get("cost_usd")) or 0.0
            self._liveness = "between attempts"
            self._count_features()

    def _count_features(self) -> None:
        try:
            left = features_left(self._plan.paths, self._plan.feature_filter)
        except OSError:
            return
        if left is not None:
            self._features = f"features {left.total - left.left}/{left.total} done"
