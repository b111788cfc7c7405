"""The loop's plain path: attempts, the log of each, counting and --max-iterations."""

from __future__ import annotations

from tests.fakes.session import failure, success
from tests.unit.run.conftest import Loop


def test_max_iterations_runs_that_many_attempts_and_exits_0(loop: Loop) -> None:
    run = loop.run(success(), max_iterations=3)
    assert run.code == 0
    assert run.session.kinds == ["initializer"] * 3
    assert run.logs() == ["001.log", "002.log", "003.log"]
    assert run.run_end["reason"] == "done"
    assert run.run_end["iterations"] == 3
    assert [e["reason"] for e in run.named("phase_end")] == ["max_iterations"]


def test_failures_are_counted_but_do_not_end_the_run_without_quit_on_abort(loop: Loop) -> None:
    run = loop.run(failure(), max_iterations=4)
    assert run.code == 0
    assert run.run_end["failures"] == 4
    assert run.run_end["iterations"] == 4
