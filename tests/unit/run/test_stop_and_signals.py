"""Asking a run to stop: `.automaker/.stop` ends it with 6 after the current attempt, a signal
with 124; both also end a rate-limit sleep at once (SUP-52, SUP-81, SUP-90)."""

from __future__ import annotations

from aidd.session.request import AttemptRequest
from tests.fakes.session import rate_limited, success
from tests.unit.run.conftest import Loop


def _stop_file(request: AttemptRequest) -> None:
    (request.project_dir / ".automaker" / ".stop").write_text("now\n")


def _signal(request: AttemptRequest) -> None:
    assert request.interrupt is not None
    request.interrupt.trigger("SIGTERM")  # what aidd's handler does on a real SIGTERM


def test_a_stop_file_written_during_an_attempt_ends_the_run_with_6_after_it(loop: Loop) -> None:
    run = loop.run(success(during=_stop_file), max_iterations=5)
    assert run.code == 6
    assert len(run.session.requests) == 1
    assert run.run_end["reason"] == "stopped"
    assert run.named("stop")
    assert "stop: .automaker/.stop honoured; exiting with 6" in (
        run.paths.iterations / "001.log").read_text()


def test_a_signal_during_an_attempt_ends_the_run_with_124(loop: Loop) -> None:
    run = loop.run(success(during=_signal), max_iterations=5)
    assert run.code == 124
    assert len(run.session.requests) == 1
    assert run.run_end["reason"] == "signal"
    assert run.named("signal")[0]["name"] == "SIGTERM"


def test_a_signal_wins_over_a_stop_file(loop: Loop) -> None:
    def both(request: AttemptRequest) -> None:
        _stop_file(request)
        _signal(request)

    run = loop.run(success(during=both), max_iterations=5)
    assert run.code == 124


def test_a_stop_file_ends_a_rate_limit_sleep_within_a_quarter_second(loop: Loop) -> None:
    stop = loop.paths.stop
    loop.clock.at(5 + 60, lambda: stop.write_text("now\n"))  # 60 s into a 1 h sleep
    run = loop.run(rate_limited(3600), max_iterations=1)
    assert run.code == 6
    assert len(run.session.requests) == 1
    assert 60 <= run.run_end["paused_s"] <= 60.25 + 1e-6


def test_a_signal_ends_a_rate_limit_sleep(loop: Loop) -> None:
    def later(request: AttemptRequest) -> None:
        interrupt = request.interrupt
        assert interrupt is not None
        loop.clock.at(120, lambda: interrupt.trigger("SIGINT"))

    run = loop.run(rate_limited(3600, during=later), max_iterations=1)
    assert run.code == 124
    assert run.run_end["paused_s"] <= 115.25 + 1e-6  # 5 s of the attempt, then the sleep


def test_a_stop_file_older_than_the_run_is_removed_not_honoured(loop: Loop) -> None:
    import os

    stop = loop.paths.stop
    stop.write_text("yesterday\n")
    os.utime(stop, (1_000_000, 1_000_000))
    run = loop.run(success(), max_iterations=2)
    assert run.code == 0
    assert len(run.session.requests) == 2
    assert not stop.exists()
    assert run.said("removed a stale .stop request from before this run")
