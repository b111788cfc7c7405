"""The three things to look at first: every rule proposes what it found with a rank (lower
is more urgent), and the report shows the first three."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from aidd.numbers import quantity as number
from aidd.reports.morning import fmt
from aidd.reports.morning.record import (
    AttemptRow,
    Attention,
    EventsSeen,
    Features,
    Gate,
    Pauses,
    RunRow,
    Window,
)
from aidd.reports.morning.tally import text

SHOWN = 3
SHORT_RUN_S = 600  # a run that ends this fast, other than by completion or a stop, failed
STREAK = 3  # failed attempts in a row worth a look; also: attempts on one feature
# Run endings that are what the user asked for, however soon they came (a budget's end has
# its own line).
_EXPECTED_ENDS = ("completed", "stopped", "done", "running", "budget")


@dataclass(frozen=True)
class Facts:
    window: Window
    runs: Sequence[RunRow]
    attempts: Sequence[AttemptRow]
    features: Features
    gate: Gate
    pauses: Pauses
    notable: Sequence[dict[str, Any]]
    events: EventsSeen


def first_things(facts: Facts) -> tuple[Attention, ...]:
    found = sorted(_all(facts), key=lambda item: item[0])
    return tuple(attention for _, attention in found[:SHOWN])


def _all(facts: Facts) -> Iterator[tuple[int, Attention]]:
    yield from _notable(facts.notable)
    yield from _runs(facts.runs)
    yield from _gate(facts.gate)
    yield from _features(facts.features)
    yield from _streaks(facts.attempts)
    yield from _pauses(facts.pauses, facts.window)
    yield from _events(facts.events)


def _notable(events: Sequence[dict[str, Any]]) -> Iterator[tuple[int, Attention]]:
    for event in events:
        kind = event.get("event")
        if kind == "budget_exhausted":
            budget = fmt.clean(text(event.get("budget")) or "a budget")
            used, limit = number(event.get("used")), number(event.get("limit"))
            figures = f": used {used:g} of {limit:g}" if used is not None and limit is not None \
                else ""
            yield 10, Attention("budget_exhausted", f"budget {budget} exhausted{figures}")
        elif kind == "failure_threshold":
            failures = number(event.get("failures"))
            yield 35, Attention("quit_on_abort", "--quit-on-abort ended the run after "
                                f"{failures or 0:g} failures in a row")
        elif kind == "stuck":
            listed = event.get("iterations")
            shown = [fmt.attempt(n) for n in listed if isinstance(n, int)][:5] \
                if isinstance(listed, list) else []
            yield 55, Attention("stuck", "stuck: no meaningful change in attempts "
                                + ", ".join(shown))


def _runs(runs: Sequence[RunRow]) -> Iterator[tuple[int, Attention]]:
    for run in runs:
        if run.reason == "no run_end":
            yield 12, Attention("run_died", f"run {run.run} has no run_end: aidd was killed "
                                "or its machine stopped")
        elif (run.reason not in _EXPECTED_ENDS and run.duration_s is not None
              and run.duration_s < SHORT_RUN_S):
            code = "-" if run.exit_code is None else str(run.exit_code)
            yield 30, Attention("short_run", f"run {run.run} ended after "
                                f"{fmt.duration(run.duration_s)}: {run.reason}, exit {code}")


def _gate(gate: Gate) -> Iterator[tuple[int, Attention]]:
    for row in gate.commands:
        if not row.red:
            continue
        failing = f"{row.new_failures} new failure{'s' if row.new_failures != 1 else ''}"
        first = f" ({', '.join(row.new[:2])})" if row.new else ""
        verb = "turned red" if row.turned_red else "red"
        yield (20 if row.turned_red else 25), Attention(
            "gate_red", f"gate {row.name} {verb} at attempt {fmt.attempt(row.red_since)}: "
            f"{failing}{first}")
    if gate.reverted:
        yield 65, Attention("passes_reverted", f"{gate.reverted} feature passes set back to "
                            "failing by the gate")


def _features(features: Features) -> Iterator[tuple[int, Attention]]:
    for name, attempts in features.struggling:
        if attempts >= STREAK:
            yield 40, Attention("feature_failing", f"feature {name}: changed by {attempts} "
                                "attempts, still not passing")
    for name in features.failed_again:
        yield 45, Attention("feature_failed_again", f"feature {name} passed, then failed again")


def _streaks(attempts: Sequence[AttemptRow]) -> Iterator[tuple[int, Attention]]:
    """The longest run of failed attempts in a row, when it is long enough."""
    best: list[AttemptRow] = []
    streak: list[AttemptRow] = []
    for attempt in attempts:
        if attempt.outcome in ("failure", "fatal"):
            streak.append(attempt)
            best = streak if len(streak) > len(best) else best
        elif attempt.outcome != "rate_limited":
            streak = []
    if len(best) >= STREAK:
        reasons = ", ".join(dict.fromkeys(a.reason for a in best))
        yield 50, Attention("failure_streak", f"{len(best)} attempts in a row failed "
                            f"({reasons}): {fmt.attempt(best[0].number)} to "
                            f"{fmt.attempt(best[-1].number)}")


def _pauses(pauses: Pauses, window: Window) -> Iterator[tuple[int, Attention]]:
    paused = pauses.rate_limit_s + pauses.pace_s
    span = (window.end - window.start).total_seconds()
    if span > 0 and paused >= span / 4:
        yield 60, Attention("paused", f"paused {fmt.duration(paused)} on rate limits and "
                            f"pacing: {paused * 100 / span:.0f} % of the window")


def _events(events: EventsSeen) -> Iterator[tuple[int, Attention]]:
    if events.error:
        yield 5, Attention("events_unreadable", f"events.jsonl not read: {events.error}")
    elif events.skipped:
        yield 70, Attention("events_skipped", f"events.jsonl: {events.skipped} lines skipped "
                            "(not a JSON event)")
