"""A Clock whose time moves only when told to (implements aidd.clock.Clock)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo


class FakeClock:
    def __init__(
        self, start: datetime | None = None, monotonic: float = 1000.0, zone: tzinfo = UTC
    ) -> None:
        self._start = start or datetime(2026, 11, 22, 12, 0, tzinfo=zone)
        self._t0 = monotonic
        self._t = monotonic
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self._t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.advance(max(0.0, seconds))

    def now(self) -> datetime:
        return self._start + timedelta(seconds=self._t - self._t0)

    def advance(self, seconds: float) -> None:
        self._t += seconds
