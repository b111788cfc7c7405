"""The worst failure decides the exit code; warnings and skips never fail."""

from __future__ import annotations

from aidd.doctor.findings import exit_code, fail, ok, skip, warn
from aidd.errors import ExitCode


def test_nothing_failed_is_0_even_with_warnings_and_skips() -> None:
    assert exit_code([ok("a", "x"), warn("b", "y", "z"), skip("c", "s")]) is ExitCode.SUCCESS


def test_the_cli_beats_config_which_beats_missing_files() -> None:
    missing = fail("spec", "gone", "fix", ExitCode.NOT_FOUND)
    config = fail("user config", "bad", "fix", ExitCode.INVALID_ARGS)
    cli = fail("cli", "missing", "install", ExitCode.CLI_ERROR)
    assert exit_code([missing]) is ExitCode.NOT_FOUND
    assert exit_code([missing, config]) is ExitCode.INVALID_ARGS
    assert exit_code([config, cli, missing]) is ExitCode.CLI_ERROR


def test_a_failure_of_another_kind_is_a_general_error() -> None:
    assert exit_code([fail("x", "odd", "fix", ExitCode.VALIDATION_ERROR)]) is (
        ExitCode.GENERAL_ERROR)
