"""Failures: --quit-on-abort N ends the run after N in a row with the last result, a success
resets the count, --continue-on-timeout keeps wall timeouts out of it, and a fatal CLI error
(authentication, billing, permissions) ends the run with 8 at once (EXIT-2, EXIT-4, ADP-44)."""

from __future__ import annotations

from aidd.errors import AgentCliError, ExitCode
from tests.fakes.session import failure, fatal, success, wall_timeout
from tests.unit.run.conftest import Loop


def test_quit_on_abort_exits_with_the_last_result_after_n_failures_in_a_row(loop: Loop) -> None:
    run = loop.run(failure(3), quit_on_abort=2, max_iterations=10)
    assert run.code == 3
    assert len(run.session.requests) == 2
    (threshold,) = run.named("failure_threshold")
    assert threshold == {**threshold, "failures": 2, "result": 3}
    assert run.run_end["reason"] == "quit_on_abort"


def test_a_success_resets_the_count(loop: Loop) -> None:
    run = loop.run(failure(), success(), failure(), failure(), quit_on_abort=2,
                   max_iterations=10)
    assert run.code == 1
    assert len(run.session.requests) == 4


def test_continue_on_timeout_keeps_wall_timeouts_out_of_the_count(loop: Loop) -> None:
    run = loop.run(wall_timeout(), wall_timeout(), wall_timeout(), failure(),
                   quit_on_abort=1, continue_on_timeout=True, max_iterations=10)
    assert run.code == 1
    assert len(run.session.requests) == 4
    assert run.run_end["failures"] == 4


def test_without_continue_on_timeout_a_wall_timeout_counts(loop: Loop) -> None:
    run = loop.run(wall_timeout(), quit_on_abort=1, max_iterations=10)
    assert run.code == ExitCode.TIMEOUT_OR_SIGNAL


def test_a_fatal_cli_error_ends_the_run_with_8_naming_the_cause(loop: Loop) -> None:
    run = loop.run(fatal("401 Unauthorized: invalid x-api-key"), max_iterations=10)
    assert isinstance(run.error, AgentCliError)
    assert run.error.exit_code == ExitCode.CLI_ERROR
    assert "401 Unauthorized" in run.error.message
    assert "authentication, billing or permissions" in run.error.message
    assert len(run.session.requests) == 1
    assert run.run_end == {**run.run_end, "exit_code": 8, "reason": "fatal"}
