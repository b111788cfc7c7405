"""Budgets end the run with 9 before the attempt that would go past them: wall time (which also
stops an attempt in flight and cuts a sleep short), tokens, cost (reported or estimated), and
the project's daily totals over every run (issue 16)."""

from __future__ import annotations

import json

from aidd.errors import ExitCode
from aidd.session.outcome import Reason
from tests.fakes.session import failure, rate_limited, success
from tests.unit.run.conftest import Loop

TOKENS = {"input": 100, "output": 20, "reasoning": 0, "cache_read": 5, "cache_write": 0}


def test_max_tokens_ends_the_run_before_the_attempt_after_the_one_that_reached_it(
        loop: Loop) -> None:
    run = loop.run(success(tokens=TOKENS), max_tokens=300, max_iterations=10)
    assert run.code == ExitCode.BUDGET_EXHAUSTED
    assert len(run.session.requests) == 3  # 125, 250, 375
    (spent,) = run.named("budget_exhausted")
    assert spent == {**spent, "budget": "tokens", "limit": 300, "used": 375}
    assert run.run_end["reason"] == "budget"
    assert run.run_end["exit_code"] == 9
    assert run.said("budget exhausted: --max-tokens 300 reached (375 tokens used); exiting with 9")


def test_max_cost_reads_the_clis_figure(loop: Loop) -> None:
    run = loop.run(success(tokens=TOKENS, cost_usd=0.2), max_cost_usd=0.5, max_iterations=10)
    assert run.code == 9
    assert len(run.session.requests) == 3
    (spent,) = run.named("budget_exhausted")
    assert (spent["budget"], spent["used"]) == ("cost_usd", 0.6)
    assert [e["cost_estimated"] for e in run.named("iteration_end")] == [False] * 3
    assert run.run_end["cost_estimated"] is False
    assert run.said("($0.6000 used)")


def test_without_a_figure_the_cost_is_estimated_and_says_so(loop: Loop) -> None:
    big = {"input": 100_000, "output": 10_000}  # sonnet 5.5: $0.20 + $0.10
    run = loop.run(success(tokens=big, model="claude-sonnet-5-5"), max_cost_usd=0.5)
    assert run.code == 9
    assert len(run.session.requests) == 2
    end = run.named("iteration_end")[0]
    assert (end["cost_usd"], end["cost_estimated"], end["model"]) == (
        0.3, True, "claude-sonnet-5-5")
    assert run.run_end["cost_estimated"] is True
    assert run.said("(~$0.6000 (estimated) used)")
    assert "cost ~$0.3000 (estimated) at claude-sonnet-5-5 prices of" in (
        run.paths.iterations / "001.log").read_text()


def test_an_unknown_model_leaves_the_cost_unknown_and_tokens_still_count(loop: Loop) -> None:
    run = loop.run(success(tokens=TOKENS, model="fake-model"), max_cost_usd=0.01,
                   max_tokens=200)
    assert run.code == 9
    assert run.named("budget_exhausted")[0]["budget"] == "tokens"
    end = run.named("iteration_end")[0]
    assert (end["cost_usd"], end["cost_estimated"], end["model"]) == (None, False, "fake-model")
    assert "cost unknown (no price for fake-model)" in (
        run.paths.iterations / "001.log").read_text()
    assert run.run_end["cost_usd"] is None


def test_the_requested_model_is_priced_when_the_cli_names_none(loop: Loop) -> None:
    run = loop.run(success(tokens={"input": 1_000_000}), model="anthropic/claude-haiku-4-5",
                   max_iterations=1)
    end = run.named("iteration_end")[0]
    assert (end["cost_usd"], end["cost_estimated"], end["model"]) == (
        1.0, True, "anthropic/claude-haiku-4-5")


def test_wall_time_before_an_attempt(loop: Loop) -> None:
    run = loop.run(success(duration_s=600), max_wall_time=1500, max_iterations=10)
    assert run.code == 9
    assert len(run.session.requests) == 3  # started at 0, 600 and 1200 s
    (spent,) = run.named("budget_exhausted")
    assert (spent["budget"], spent["limit"]) == ("wall_time", 1500)
    assert spent["used"] >= 1800


def test_the_attempt_in_flight_gets_the_runs_deadline(loop: Loop) -> None:
    start = loop.clock.monotonic()
    run = loop.run(success(), max_wall_time=3600, max_iterations=2)
    assert run.code == 0
    assert {r.deadline_s for r in run.session.requests} == {start + 3600}
    assert loop.run(success(), max_iterations=1).session.requests[0].deadline_s is None


def test_an_attempt_stopped_at_the_deadline_is_no_failure_and_the_run_ends_with_9(
        loop: Loop) -> None:
    stopped = failure(ExitCode.BUDGET_EXHAUSTED, Reason.BUDGET, duration_s=3600)
    run = loop.run(stopped, max_wall_time=3600, quit_on_abort=1)
    assert run.code == 9
    assert run.run_end["reason"] == "budget"
    assert run.run_end["failures"] == 0
    assert run.run_end["iterations"] == 1
    assert not run.named("failure_threshold")


def test_wall_time_cuts_a_rate_limit_sleep_short(loop: Loop) -> None:
    run = loop.run(rate_limited(7200), max_wall_time=1800, max_iterations=1)
    assert run.code == 9
    assert len(run.session.requests) == 1
    assert run.named("rate_limit_sleep")[0]["seconds"] == 7200
    assert 1795 - 0.25 <= run.run_end["paused_s"] <= 1795 + 0.25  # 5 s attempt, then asleep


def test_rate_limited_attempts_count_toward_the_budgets(loop: Loop) -> None:
    run = loop.run(rate_limited(60, tokens=TOKENS), success(tokens=TOKENS), max_tokens=200)
    assert run.code == 9
    assert len(run.session.requests) == 2
    assert run.run_end["tokens"]["input"] == 200


def _earlier_run(loop: Loop, day: str, tokens: int, cost: float) -> None:
    record = {"v": 1, "ts": f"{day}T08:00:00.000Z", "run": "20261122T080000Z-1",
              "event": "iteration_end", "tokens": {"input": tokens}, "cost_usd": cost}
    with loop.paths.events.open("a") as events:
        events.write(json.dumps(record) + "\n")


def test_daily_budgets_count_todays_earlier_runs(loop: Loop) -> None:
    _earlier_run(loop, "2026-11-22", 250, 1.0)  # the fake clock's day
    _earlier_run(loop, "2026-11-21", 10_000, 100.0)
    run = loop.run(success(tokens=TOKENS, cost_usd=0.5), daily_max_tokens=500, max_iterations=10)
    assert run.code == 9
    assert len(run.session.requests) == 2  # 250 + 125 + 125
    (spent,) = run.named("budget_exhausted")
    assert (spent["budget"], spent["used"]) == ("daily_tokens", 500)


def test_a_daily_budget_already_spent_runs_no_attempt(loop: Loop) -> None:
    _earlier_run(loop, "2026-11-22", 0, 2.5)
    run = loop.run(success(), daily_max_cost_usd=2.5)
    assert run.code == 9
    assert run.session.requests == []
    assert run.named("budget_exhausted")[0]["budget"] == "daily_cost_usd"


def test_a_run_past_midnight_starts_a_new_day(loop: Loop) -> None:
    _earlier_run(loop, "2026-11-22", 400, 0.0)
    # The fake clock starts at 12:00 UTC; each attempt takes 4 h, so the third starts at 20:00
    # and the fourth on the 23rd, when only this run's attempts since midnight count.
    run = loop.run(success(tokens={"input": 40}, duration_s=4 * 3600), daily_max_tokens=500,
                   max_iterations=5)
    assert run.code == 0
    assert not run.named("budget_exhausted")


def test_no_budget_no_check(loop: Loop) -> None:
    run = loop.run(success(tokens=TOKENS, cost_usd=5.0), max_iterations=3, max_tokens=0,
                   max_cost_usd=0)
    assert run.code == 0
    assert len(run.session.requests) == 3


def test_a_confirmed_completion_wins_over_a_spent_budget(loop: Loop) -> None:
    """The precheck comes first: a complete project says 73, not 9."""
    _earlier_run(loop, "2026-11-22", 1000, 0.0)
    (loop.paths.features / "f-1").mkdir(parents=True)
    (loop.paths.features / "f-1" / "feature.json").write_text(json.dumps(
        {"id": "f-1", "category": "c", "description": "d", "passes": True,
         "status": "completed"}))
    loop.paths.completed.write_text("done\n")
    run = loop.run(success(), daily_max_tokens=100)
    assert run.code == ExitCode.PROJECT_COMPLETE
    assert not run.named("budget_exhausted")
