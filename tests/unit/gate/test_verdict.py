"""Only failures the baseline did not have block: test by test with JUnit reports on both
sides, command by command otherwise."""

from __future__ import annotations

from aidd.gate.commands import GateCommand
from aidd.gate.runner import CommandRun
from aidd.gate.verdict import baseline_of, judge

CMD = GateCommand("tests", "pytest -q", 60, "report.xml")


def _run(exit: int | None, failing: set[str] | None = None, *, timed_out: bool = False,
         cancelled: bool = False) -> CommandRun:
    return CommandRun(CMD, exit, timed_out, cancelled, 1.0, ("last line",),
                      None if failing is None else frozenset(failing))


def _judge(now: CommandRun, base: CommandRun | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    verdict = judge(4, (now,), baseline_of((base,)) if base else {})
    (cv,) = verdict.commands
    return cv.new_failures, cv.known_failures


def test_test_by_test_with_reports_on_both_sides() -> None:
    base = _run(1, {"a", "b"})
    assert _judge(_run(1, {"a", "b"}), base) == ((), ("a", "b"))
    assert _judge(_run(1, {"a", "c"}), base) == (("c",), ("a",))
    assert _judge(_run(0, set()), base) == ((), ())


def test_command_by_command_without_reports() -> None:
    assert _judge(_run(2), _run(2)) == ((), ("tests: exited 2",))
    assert _judge(_run(2), _run(0)) == (("tests: exited 2",), ())
    assert _judge(_run(2), None) == (("tests: exited 2",), ())


def test_a_red_command_with_no_test_to_blame_is_a_failure_of_its_own() -> None:
    # The report says all pass but the command failed (a build step, a coverage threshold).
    assert _judge(_run(1, set()), _run(0, set())) == (("tests: exited 1",), ())
    # Tests failing now, the baseline red without a report: known as a whole.
    assert _judge(_run(1, {"a"}), _run(1)) == ((), ("a",))
    # A green baseline: every failing test is new.
    assert _judge(_run(1, {"a"}), _run(0)) == (("a",), ())


def test_timeouts() -> None:
    hung = _run(None, timed_out=True)
    assert _judge(hung, _run(0)) == (("tests: timed out after 60s",), ())
    assert _judge(hung, _run(None, timed_out=True)) == ((), ("tests: timed out after 60s",))
    assert _judge(hung, _run(1)) == (("tests: timed out after 60s",), ())


def test_a_stopped_command_judges_nothing_and_leaves_no_baseline() -> None:
    stopped = _run(None, cancelled=True)
    assert _judge(stopped, _run(0)) == ((), ())
    assert baseline_of((stopped,)) == {}
    assert not judge(4, (stopped,), {}).complete


def test_the_summary_names_the_command_the_new_tests_and_the_output() -> None:
    verdict = judge(4, (_run(1, {"a", "c"}),), baseline_of((_run(1, {"a"}),)))
    assert verdict.red
    text = verdict.summary()
    assert text.startswith("Command `pytest -q` (tests) exited 1.\nNewly failing tests (1):\n- c")
    assert "- a\n" not in text
    assert text.endswith("Last 1 lines of its output:\n```\nlast line\n```")
    assert judge(4, (_run(0, set()),), {}).summary() == ""


def test_an_unnamed_command_is_named_once_in_the_summary() -> None:
    """Its name is its command line: `Command `x` (x)` would say it twice."""
    unnamed = GateCommand("test ! -s red.flag", "test ! -s red.flag")
    run = CommandRun(unnamed, 1, False, False, 1.0, (), None)
    assert judge(4, (run,), {}).summary().startswith(
        "Command `test ! -s red.flag` exited 1.")
