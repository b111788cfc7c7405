"""A rate-limited attempt: aidd sleeps until the wake time, keeps the log as
NNN.ratelimited.log, and runs the same iteration again; the sleep is not an iteration (SUP-50)."""

from __future__ import annotations

from tests.fakes.session import rate_limited, success
from tests.unit.run.conftest import Loop


def test_sleeps_until_the_wake_time_then_retries_the_same_iteration(loop: Loop) -> None:
    run = loop.run(rate_limited(600), success(), max_iterations=1)
    assert run.code == 0
    assert run.logs() == ["001.ratelimited.log", "002.log"]
    (sleep,) = run.named("rate_limit_sleep")
    assert sleep["number"] == 1
    assert sleep["seconds"] == 600
    assert sleep["source"] == "retry_after"
    assert run.run_end["iterations"] == 1
    assert run.run_end["attempts"] == 2
    assert run.run_end["rate_limit_sleeps"] == 1
    assert 600 <= run.run_end["paused_s"] <= 600.25
    assert run.run_end["failures"] == 0


def test_rate_limits_never_count_toward_quit_on_abort(loop: Loop) -> None:
    run = loop.run(rate_limited(30), rate_limited(30), rate_limited(30), success(),
                   max_iterations=1, quit_on_abort=1)
    assert run.code == 0
    assert run.run_end["rate_limit_sleeps"] == 3
    assert [e["index"] for e in run.named("iteration_start")] == [1, 1, 1, 1]
