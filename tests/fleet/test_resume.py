"""A retry's limits: what is left of the fleet file's --max-iterations and budgets after the
run's earlier attempts (aidd.fleet.resume), never looser than the file's."""

from __future__ import annotations

from aidd.fleet.records import Progress
from aidd.fleet.resume import resume_args

LIMITS = ["--idle-timeout", "40", "--max-iterations", "5", "--max-cost-usd=2",
          "--max-tokens", "1000", "--max-wall-time", "1h"]


def test_a_retry_gets_what_is_left_of_each_limit() -> None:
    done = Progress(ended=3, cost_usd=0.75, tokens=400)
    left = resume_args(LIMITS, done, elapsed_s=600.5)
    assert not left.spent
    assert left.args == ["--idle-timeout", "40", "--max-iterations", "2", "--max-cost-usd",
                         "1.25", "--max-tokens", "600", "--max-wall-time", "3000"]


def test_limits_not_given_or_not_used_yet_are_left_as_they_are() -> None:
    assert resume_args(LIMITS[:2], Progress(ended=9), 99).args == LIMITS[:2]
    assert resume_args(LIMITS, Progress(), 0).args == LIMITS  # the first attempt
    args = ["--max-iterations", "5", "--max-cost-usd", "0"]  # 0: no budget
    assert resume_args(args, Progress(ended=1, cost_usd=1), 0).args == [
        "--max-cost-usd", "0", "--max-iterations", "4"]


def test_the_last_of_repeated_flags_counts_as_in_click() -> None:
    args = ["--max-iterations", "9", "--max-iterations=4"]
    assert resume_args(args, Progress(ended=1), 0).args == ["--max-iterations", "3"]


def test_iterations_used_up_end_the_run_done_without_aidd() -> None:
    left = resume_args(LIMITS, Progress(ended=5), 1)
    assert (left.exit_code, left.spent) == (
        0, "--max-iterations 5 was used up by the run's earlier attempts: no aidd started")


def test_a_spent_budget_ends_the_run_with_9() -> None:
    assert resume_args(LIMITS, Progress(ended=1, cost_usd=2.0), 1).exit_code == 9
    assert resume_args(LIMITS, Progress(ended=1, tokens=1000), 1).exit_code == 9
    assert resume_args(LIMITS, Progress(ended=1), 3600).exit_code == 9


def test_a_forged_negative_cost_never_loosens_the_budget() -> None:
    left = resume_args(["--max-cost-usd", "2"], Progress(cost_usd=-50.0), 0)
    assert left.args == ["--max-cost-usd", "2"]


def test_a_sliver_of_budget_is_never_written_as_0_which_means_none() -> None:
    left = resume_args(["--max-cost-usd", "1"], Progress(cost_usd=0.9999999), 0)
    assert left.args == ["--max-cost-usd", "0.000001"]


def test_a_value_aidd_rejects_is_passed_on_for_aidd_to_reject() -> None:
    args = ["--max-iterations", "many"]
    assert resume_args(args, Progress(ended=2), 0).args == args


def test_an_iteration_cut_off_by_a_signal_is_done_again() -> None:
    lost = Progress(ended=2, cut=1, cost_usd=0.5)  # the second was cut off: its cost counts
    assert resume_args(["--max-iterations", "3", "--max-cost-usd", "2"], lost, 0).args == [
        "--max-iterations", "2", "--max-cost-usd", "1.5"]
