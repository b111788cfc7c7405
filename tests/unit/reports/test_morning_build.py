"""The morning report's record, built from a whole night of real events, checkpoints and
commits: every figure the issue asks for."""

from __future__ import annotations

import os
from datetime import timedelta

from aidd.reports.health import Verdict
from aidd.reports.morning.build import build_report
from aidd.reports.morning.record import MorningReport
from tests.unit.reports.night import Night


def test_each_run_in_the_window_with_its_end_reason_and_exit_code(report: MorningReport) -> None:
    assert [(r.run[-4:], r.reason, r.exit_code, r.attempts) for r in report.runs] == [
        ("4242", "budget", 9, 8), ("4343", "fatal", 8, 1)]
    assert report.runs[1].duration_s == 71.0


def test_attempts_by_result_and_failures_by_reason(report: MorningReport) -> None:
    assert [(c.key, c.label, c.count) for c in report.results] == [
        ("0", "success", 5), ("1", "exit 1", 1), ("71", "idle timeout", 1),
        ("72", "provider error", 1), ("74", "rate limited", 1)]
    assert {c.key: c.count for c in report.failures} == {
        "idle_timeout": 1, "provider_error": 1, "fatal": 1}


def test_features_that_became_passing_with_their_attempt_and_commit(report: MorningReport,
                                                                    night: Night) -> None:
    passed = {p.feature: p for p in report.features.passed}
    assert sorted(passed) == ["search-box", "user-login"]
    login, search = passed["user-login"], passed["search-box"]
    assert (login.number, login.subject, login.passing_now) == (2, "feat: user login", True)
    assert login.commit == night.git("log", "-1", "--format=%H", "--grep", "feat: user login")
    assert login.checkpoint is not None
    assert login.checkpoint.endswith("/002-end")
    assert (search.number, search.commit, search.passing_now) == (7, None, False)
    assert report.features.failed_again == ("search-box",)
    assert dict(report.features.struggling) == {"cart-total": 4, "search-box": 2}
    assert (report.features.passing_now, report.features.total_now) == (1, 3)
    assert report.features.passing_at_start == 0
    assert [n for _, n in report.features.series][-3:] == [1, 2, 1]  # c passes, then fails


def test_the_diffstat_of_the_window_from_its_first_checkpoint_to_its_last(
        report: MorningReport) -> None:
    diff = report.diffstat
    assert diff is not None
    assert diff.source == "checkpoints"
    assert diff.base.endswith("-4242/001")
    assert diff.head.endswith("-4343/009-end")
    changed = {c.path: (c.added, c.deleted) for c in diff.top}
    assert changed["src/search.py"] == (10, 0)
    assert diff.files == len(changed) == 5


def test_tokens_and_cost_reported_and_estimated(report: MorningReport) -> None:
    usage = report.usage
    assert usage.tokens == {"input": 8 * 1000 + 10, "output": 1600, "reasoning": 0,
                            "cache_read": 400, "cache_write": 0}
    assert (round(usage.reported_usd, 6), usage.estimated_usd, usage.unknown_cost) == (
        2.5, 0.25, 2)


def test_time_paused_on_rate_limits_and_pacing(report: MorningReport) -> None:
    pauses = report.pauses
    assert (pauses.rate_limit_s, pauses.rate_limits, pauses.pace_s, pauses.paces) == (
        1800.0, 1, 600.0, 1)


def test_the_gate_that_turned_red_and_the_checkpoints(report: MorningReport) -> None:
    (row,) = report.gate.commands
    assert (row.name, row.red, row.red_since, row.turned_red, row.new_failures) == (
        "pytest", True, 5, True, 2)
    assert report.gate.baseline_failing == 0
    assert len(report.checkpoints) == 18


def test_what_to_look_at_first_is_the_health_verdict_on_the_window(
        report: MorningReport) -> None:
    health = report.health
    assert health.verdict is Verdict.FAILED
    assert health.headline == "run ended fatal (exit 8): the agent CLI cannot be used"
    assert [r.kind for r in health.reasons] == [
        "ended_fatal", "provider_error", "hung", "budget", "gate_red", "features_left",
        "long_waits"]
    assert all(f"--project-dir {report.project_dir}" in r.next for r in health.reasons)


def test_the_default_window_is_the_last_run(night: Night) -> None:
    report = build_report(night.paths, None, night.clock.now(), os.environ)
    assert [r.run[-4:] for r in report.runs] == ["4343"]
    assert len(report.attempts) == 1
    assert report.window.since == "last-run"


def test_a_window_after_everything_holds_nothing_and_says_so(night: Night) -> None:
    report = build_report(night.paths, "1m", night.clock.now() + timedelta(days=1), os.environ)
    assert (report.runs, report.attempts, report.features.passed) == ((), (), ())
    assert report.diffstat is None or report.diffstat.files == 0
