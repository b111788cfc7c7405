"""The three things to look at first: each rule on its own, and the order between them."""

from __future__ import annotations

from datetime import timedelta

from aidd.reports.morning.attention import Facts, first_things
from aidd.reports.morning.record import (
    AttemptRow,
    EventsSeen,
    Features,
    Gate,
    GateRow,
    Pauses,
    RunRow,
    Window,
)
from tests.unit.reports.night import START

WINDOW = Window(START, START + timedelta(hours=8), "last-run")
QUIET = Pauses(0, 0, 0, 0)
NO_FEATURES = Features("none", (), (), (), 0, 0, 0, ())
NO_GATE = Gate((), 0, None, 0)
EVENTS = EventsSeen(10, 10, 0, None)


def attempt(n: int, outcome: str, reason: str = "exit_status") -> AttemptRow:
    at = START + timedelta(minutes=10 * n)
    return AttemptRow("r", n, at, at + timedelta(minutes=5), 0 if outcome == "success" else 72,
                      outcome, reason, "coding", 0, None, False)


def facts(**changes: object) -> Facts:
    base: dict[str, object] = {"window": WINDOW, "runs": (), "attempts": (),
                               "features": NO_FEATURES, "gate": NO_GATE, "pauses": QUIET,
                               "notable": (), "events": EVENTS}
    return Facts(**(base | changes))  # type: ignore[arg-type]


def kinds(found: Facts) -> list[str]:
    return [a.kind for a in first_things(found)]


def test_a_quiet_good_night_has_nothing_to_look_at() -> None:
    assert kinds(facts(attempts=[attempt(1, "success")])) == []


def test_a_feature_failing_three_times_and_one_that_failed_again() -> None:
    features = Features("checkpoints", (), ("b",), (("a", 3), ("c", 2)), 0, 3, 0, ())
    found = first_things(facts(features=features))
    assert [a.message for a in found] == ["feature a: changed by 3 attempts, still not passing",
                                          "feature b passed, then failed again"]


def test_failures_in_a_row_ignore_rate_limits_between_them() -> None:
    attempts = [attempt(1, "success"), attempt(2, "failure", "idle_timeout"),
                attempt(3, "rate_limited"), attempt(4, "failure", "provider_error"),
                attempt(5, "fatal", "fatal"), attempt(6, "success")]
    (found,) = first_things(facts(attempts=attempts))
    assert found.message == ("3 attempts in a row failed (idle_timeout, provider_error, fatal): "
                             "002 to 005")


def test_only_the_three_most_urgent_are_shown_most_urgent_first() -> None:
    runs = (RunRow("r-1", START, None, "no run_end", None, None, 2),
            RunRow("r-2", START, START, "fatal", 8, 71.0, 1),
            RunRow("r-3", START, START, "completed", 73, 30.0, 1))
    gate = Gate((GateRow("pytest", False, True, 4, 2, 0, ("t::a",), 3, True),), 2, 0, 0)
    found = facts(runs=runs, gate=gate, pauses=Pauses(3 * 3600, 2, 0, 0),
                  events=EventsSeen(10, 10, 2, None))
    assert kinds(found) == ["run_died", "gate_red", "short_run"]
    assert first_things(found)[1].message == (
        "gate pytest turned red at attempt 003: 2 new failures (t::a)")


def test_long_pauses_and_skipped_lines_are_worth_a_look_when_nothing_else_is() -> None:
    found = facts(pauses=Pauses(2 * 3600, 3, 1800, 1), events=EventsSeen(10, 10, 2, None))
    assert kinds(found) == ["paused", "events_skipped"]
    assert first_things(found)[0].message == ("paused 2h 30m on rate limits and pacing: 31 % of "
                                              "the window")
