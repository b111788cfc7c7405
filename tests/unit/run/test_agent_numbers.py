"""Numbers from the agent, on the loop (issue 27 items 5, 6): a forged cost never switches a cost
budget off, a reset however far away sleeps at most --rate-limit-max-sleep, and a reset that is
no time at all is a warning, never a crash; events.jsonl stays JSON (no NaN, no Infinity)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from aidd.agents.ratelimit import QuotaWindow
from aidd.errors import ExitCode
from tests.fakes.session import rate_limited_until, success
from tests.unit.run.conftest import Loop, LoopRun

SIX_HOURS = 6 * 3600
YEAR_2100 = datetime(2100, 1, 1, tzinfo=UTC).timestamp()
PRICED = {"input": 100_000, "output": 10_000}  # $0.30 at claude-sonnet-5-5 prices


def _strict_events(run: LoopRun) -> list[dict[str, Any]]:
    """events.jsonl read as strict JSON: a bare NaN or Infinity fails the test."""
    def refuse(word: str) -> None:
        raise AssertionError(f"events.jsonl holds {word}")

    lines = run.paths.events.read_text().splitlines()
    return [json.loads(line, parse_constant=refuse) for line in lines if line.strip()]


@pytest.mark.parametrize("forged", [float("nan"), float("inf"), -1000.0])
def test_a_forged_cost_never_switches_the_cost_budget_off(loop: Loop, forged: float) -> None:
    """Before: NaN made the run's total NaN (never >= the limit), a negative one ate the
    budget; 4 attempts of $50 went through a $10 budget."""
    forging = success(cost_usd=forged, tokens=PRICED, model="claude-sonnet-5-5")
    run = loop.run(forging, success(cost_usd=50.0), success(cost_usd=50.0),
                   max_cost_usd=10, max_iterations=5)
    assert run.code == ExitCode.BUDGET_EXHAUSTED
    assert len(run.session.requests) == 2  # the forged one (estimated), then $50 is past it
    (spent,) = run.named("budget_exhausted")
    assert (spent["budget"], spent["used"]) == ("cost_usd", 50.3)
    ends = [e for e in _strict_events(run) if e["event"] == "iteration_end"]
    assert [(e["cost_usd"], e["cost_estimated"]) for e in ends] == [(0.3, True), (50.0, False)]
    assert run.said("attempt 001: the agent reported numbers aidd cannot use (cost_usd ")


def test_a_forged_cost_is_estimated_from_the_tokens(loop: Loop) -> None:
    run = loop.run(success(cost_usd=float("nan"), tokens=PRICED, model="claude-sonnet-5-5"),
                   max_cost_usd=0.5, max_iterations=5)
    assert run.code == ExitCode.BUDGET_EXHAUSTED
    assert len(run.session.requests) == 2  # $0.30 estimated each: 0.60 >= 0.50
    ends = run.named("iteration_end")
    assert [(e["cost_usd"], e["cost_estimated"]) for e in ends] == [(0.3, True)] * 2
    assert run.said("(cost_usd nan), taken as unknown; its cost is estimated from its tokens")


def test_a_forged_cost_nothing_can_estimate_ends_a_run_with_a_cost_budget(loop: Loop) -> None:
    run = loop.run(success(cost_usd=float("inf"), tokens=PRICED, model="fake-model"),
                   max_cost_usd=10, max_iterations=5)
    assert run.code == ExitCode.BUDGET_EXHAUSTED
    assert len(run.session.requests) == 1
    (spent,) = run.named("budget_exhausted")
    assert spent == {**spent, "budget": "cost_usd", "used": None, "unknown_cost_of": 1}
    assert run.said("budget exhausted: --max-cost-usd 10.00 cannot be kept: attempt 001 "
                    "reported the cost inf")
    # Without a cost budget the same attempt only warns, and the run goes on.
    assert loop.run(success(cost_usd=float("inf"), tokens=PRICED, model="fake-model"),
                    max_iterations=2).code == 0


def test_a_reset_in_2100_sleeps_at_most_the_cap(loop: Loop) -> None:
    run = loop.run(rate_limited_until(YEAR_2100), success(), max_iterations=1)
    assert run.code == 0
    _strict_events(run)
    (sleep,) = run.named("rate_limit_sleep")
    assert sleep["seconds"] == SIX_HOURS
    assert sleep["capped_from"].startswith("2100-01-01T00:01:00")  # reset + the 60 s buffer
    assert SIX_HOURS <= run.run_end["paused_s"] <= SIX_HOURS + 0.25
    assert run.said("cut to --rate-limit-max-sleep 6h 0m 0s")


def test_the_cap_is_a_flag(loop: Loop) -> None:
    run = loop.run(rate_limited_until(YEAR_2100), success(), max_iterations=1,
                   rate_limit_max_sleep=5400)
    assert run.named("rate_limit_sleep")[0]["seconds"] == 5400
    near = loop.clock.now().timestamp() + 600  # a reset within the cap: not cut
    sleep = loop.run(rate_limited_until(near), success(), max_iterations=1).named(
        "rate_limit_sleep")[-1]  # the same project: the first run's events are there too
    assert sleep["capped_from"] is None
    assert 600 <= sleep["seconds"] <= 660


@pytest.mark.parametrize("forged", [1e20, float("nan"), -5.0])
def test_a_reset_that_is_no_time_warns_and_the_run_goes_on(loop: Loop, forged: float) -> None:
    """Before: 1e20 and NaN crashed aidd with an internal OverflowError (or ValueError)."""
    run = loop.run(rate_limited_until(forged), success(), max_iterations=1,
                   rate_limit_fallback=120)
    assert run.code == 0, run.error
    (sleep,) = run.named("rate_limit_sleep")
    assert (sleep["source"], sleep["seconds"]) == ("fallback", 120)
    (warning,) = [e for e in _strict_events(run) if e["event"] == "warning"]
    assert warning["message"].startswith("rate limit: resetsAt ")
    assert warning["message"].endswith(" is not a time")


def test_a_reset_already_past_warns_and_waits_the_buffer(loop: Loop) -> None:
    past = loop.clock.now().timestamp() - 3600
    run = loop.run(rate_limited_until(past), success(), max_iterations=1, rate_limit_buffer=30)
    assert run.code == 0
    assert run.named("rate_limit_sleep")[0]["seconds"] == 30
    assert "is already past" in run.named("warning")[0]["message"]


def test_a_pacing_window_resetting_in_2100_pauses_at_most_the_cap(loop: Loop) -> None:
    far = YEAR_2100 - loop.clock.now().timestamp()  # the fake's resets_at is relative
    window = (QuotaWindow("seven_day", 0.95, far),)
    run = loop.run(success(quota=window), max_iterations=3, pace_at=80)
    assert run.code == 0
    assert len(run.session.requests) == 3
    pauses = run.named("pace")
    assert [p["seconds"] for p in pauses] == [SIX_HOURS, SIX_HOURS]  # once per reading
    assert pauses[0]["capped_from"].startswith("2100-01-01T00:01")
    assert run.said("cut to --rate-limit-max-sleep 6h 0m 0s")


def test_a_pacing_window_whose_reset_is_no_time_warns_and_does_not_pause(loop: Loop) -> None:
    window = (QuotaWindow("five_hour", 0.95, 1e20),)
    run = loop.run(success(quota=window), success(), max_iterations=2, pace_at=80,
                   cli="claude-code")
    assert run.code == 0, run.error
    assert not run.named("pace")
    (warning,) = run.named("warning")
    assert warning["message"].startswith("pacing: the five_hour quota window's reset 1.0")
    assert warning["message"].endswith("e+20 is not a time; not pausing")
