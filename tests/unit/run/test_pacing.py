"""--pace-at: once the CLI reports a quota window used to the mark, aidd pauses before the next
attempt until the window resets (plus --rate-limit-buffer), like a rate-limit sleep: a `.stop`
or a signal ends the pause and the run (issue 16)."""

from __future__ import annotations

from datetime import datetime

from aidd.agents.ratelimit import QuotaWindow
from aidd.session.request import AttemptRequest
from tests.fakes.session import rate_limited, success
from tests.unit.run.conftest import Loop

# resets_at is relative to the end of the attempt that reports it (tests/fakes/session.py)
FIVE_HOUR_AT_85 = (QuotaWindow("five_hour", 0.85, 3600),)


def test_pauses_until_the_window_resets_then_runs_the_next_attempt(loop: Loop) -> None:
    run = loop.run(success(quota=FIVE_HOUR_AT_85), success(), max_iterations=2, pace_at=80,
                   rate_limit_buffer=30)
    assert run.code == 0
    assert len(run.session.requests) == 2
    (pace,) = run.named("pace")
    assert (pace["number"], pace["utilization"], pace["window"]) == (1, 85.0, "five_hour")
    assert pace["seconds"] == 3630
    reset = loop.clock.now()  # the second attempt ended 5 s after the pause
    assert datetime.fromisoformat(pace["until"]).timestamp() == reset.timestamp() - 5
    assert 3630 <= run.run_end["paused_s"] <= 3630.25
    assert run.said("pacing: the five_hour quota window is 85% used (--pace-at 80)")
    assert run.run_end["rate_limit_sleeps"] == 0


def test_below_the_mark_or_without_pace_at_no_pause(loop: Loop) -> None:
    assert not loop.run(success(quota=FIVE_HOUR_AT_85), max_iterations=2,
                        pace_at=90).named("pace")
    assert not loop.run(success(quota=FIVE_HOUR_AT_85), max_iterations=2).named("pace")


def test_a_window_is_waited_for_once(loop: Loop) -> None:
    run = loop.run(success(quota=FIVE_HOUR_AT_85), success(), success(), max_iterations=3,
                   pace_at=80, rate_limit_buffer=0)
    assert len(run.named("pace")) == 1


def test_a_stop_file_ends_the_pause(loop: Loop) -> None:
    stop = loop.paths.stop

    def later(request: AttemptRequest) -> None:
        loop.clock.at(5 + 600, lambda: stop.write_text("now\n"))  # 10 min into the pause

    run = loop.run(success(quota=FIVE_HOUR_AT_85, during=later), max_iterations=2, pace_at=80)
    assert run.code == 6
    assert len(run.session.requests) == 1
    assert 600 <= run.run_end["paused_s"] <= 600.25 + 1e-6


def test_a_signal_ends_the_pause(loop: Loop) -> None:
    def later(request: AttemptRequest) -> None:
        interrupt = request.interrupt
        assert interrupt is not None
        loop.clock.at(120, lambda: interrupt.trigger("SIGTERM"))

    run = loop.run(success(quota=FIVE_HOUR_AT_85, during=later), max_iterations=2, pace_at=80)
    assert run.code == 124
    assert len(run.session.requests) == 1


def test_the_wall_time_budget_cuts_the_pause_short(loop: Loop) -> None:
    run = loop.run(success(quota=FIVE_HOUR_AT_85), max_iterations=2, pace_at=80,
                   max_wall_time=1800)
    assert run.code == 9
    assert len(run.session.requests) == 1
    assert run.named("budget_exhausted")[0]["budget"] == "wall_time"


def test_a_cli_that_reports_no_quota_use_is_named_at_start(loop: Loop) -> None:
    run = loop.run(success(), max_iterations=1, pace_at=80)  # the loop's CLI: opencode
    assert run.said("--pace-at: OpenCode reports no quota use, so pacing never pauses")
    assert not loop.run(success(), max_iterations=1, pace_at=80,
                        cli="claude-code").said("reports no quota use")


def test_pacing_applies_to_the_retry_after_a_rate_limit_sleep(loop: Loop) -> None:
    week = (QuotaWindow("seven_day", 0.9, 86400),)
    run = loop.run(rate_limited(60, quota=week), success(), max_iterations=1, pace_at=80,
                   rate_limit_buffer=0)
    assert run.code == 0
    assert len(run.named("rate_limit_sleep")) == 1
    (pace,) = run.named("pace")
    assert pace["window"] == "seven_day"
    assert len(run.session.requests) == 2
