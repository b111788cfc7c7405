"""The run's end asks the health verdict (aidd/reports/health.py): run_end carries it, the
last console line says it, and --strict-exit turns a failed run's 0 into 10 (issue 28)."""

from __future__ import annotations

from aidd.errors import ExitCode
from tests.fakes.session import failure, success
from tests.unit.run.conftest import Loop


def test_a_stuck_run_exits_0_yet_its_end_says_failed_with_the_next_step(loop: Loop) -> None:
    run = loop.run(success())
    assert run.code == 0
    health = run.run_end["health"]
    assert (health["verdict"], [r["kind"] for r in health["reasons"]]) == ("failed", ["stuck"])
    assert f"--project-dir {loop.paths.root}" in health["reasons"][0]["next"]
    last = run.console.rstrip("\n").splitlines()[-1]
    assert last.endswith("— health: failed: stuck: attempts 001, 002, 003 changed nothing")
    assert "run ended (done): exit 0" in last
    assert "health 1. stuck: attempts 001, 002, 003 changed nothing; next: " in run.console


def test_strict_exit_makes_a_failed_run_exit_10_and_run_end_says_so(loop: Loop) -> None:
    run = loop.run(success(), failure(), failure(), max_iterations=3, strict_exit=True)
    assert run.code == ExitCode.RUN_FAILED == 10
    assert (run.run_end["exit_code"], run.run_end["health"]["verdict"]) == (10, "failed")
    assert "strict-exit" in run.named("run_start")[0]["flags"]
    assert run.run_end["health"]["headline"] == "2 of 3 attempts failed"


def test_one_failure_in_three_is_attention_and_strict_exit_keeps_the_code(loop: Loop) -> None:
    run = loop.run(success(), failure(), success(), max_iterations=3, strict_exit=True)
    assert run.code == 0
    assert run.run_end["health"]["verdict"] == "attention"
    assert run.console.rstrip("\n").splitlines()[-1].endswith(
        "— health: attention: 1 of 3 attempts failed otherwise (exit 1 ×1)")
