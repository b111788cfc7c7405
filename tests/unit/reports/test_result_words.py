"""A result is called one thing in every table of the report (issue 27 item 17): 124, the wall
clock or a signal to aidd, was "wall timeout" in the results table and "timeout (71, 124)" in
the chart's legend; the words now come from aidd.errors alone."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from aidd.errors import ExitCode, result_words
from aidd.reports.morning import svg
from aidd.reports.morning.build import build_report
from aidd.reports.morning.html import render_html
from aidd.reports.morning.jsonform import report_json
from aidd.reports.morning.text import render_text
from tests.unit.reports.night import SINCE, Night


def test_the_words_for_124_are_the_same_in_every_table(tmp_path: Path) -> None:
    night = Night(tmp_path, git_project=False, checkpoints=False)
    night.start_run()
    night.attempt(124, reason="wall_timeout")
    night.attempt(124, reason="signal")
    night.attempt(71, reason="idle_timeout")
    night.end_run("signal", 124)
    report = build_report(night.paths, SINCE, night.clock.now() + timedelta(hours=1),
                          os.environ)
    words = result_words(ExitCode.TIMEOUT_OR_SIGNAL)
    assert {c.key: c.label for c in report.results} == {
        "71": result_words(ExitCode.IDLE_TIMEOUT), "124": words}
    by_result = report_json(report)["attempts"]["by_result"]
    assert {row["label"] for row in by_result if row["result"] == 124} == {words}
    assert f" 124  {words} " in render_text(report)
    html = render_html(report)
    timeouts = [a for a in report.attempts if a.result == ExitCode.TIMEOUT_OR_SIGNAL]
    legend = {key: label for key, label, _ in svg.CLASSES}[svg.result_class(timeouts[0])]
    assert words in legend  # the chart's legend names the same result the table names
    assert legend in html
    assert html.count(f"124 {words} (") == len(timeouts)  # each attempt's tooltip


def test_context_exhaustion_has_its_own_colour_in_the_chart(tmp_path: Path) -> None:
    """Result 76 was drawn as a plain failure: it is its own result, with its own legend."""
    night = Night(tmp_path, git_project=False, checkpoints=False)
    night.start_run()
    night.attempt(76, reason="context_exhausted")
    night.attempt(1, reason="exit_nonzero")
    night.end_run("done", 0)
    report = build_report(night.paths, SINCE, night.clock.now() + timedelta(hours=1),
                          os.environ)
    exhausted, failed = report.attempts
    assert svg.result_class(exhausted) == "context_exhausted" != svg.result_class(failed)
    legend = {key: label for key, label, _ in svg.CLASSES}
    assert legend["context_exhausted"] == result_words(ExitCode.CONTEXT_EXHAUSTED)
    assert legend["context_exhausted"] in render_html(report)
