"""events.jsonl and the feature files are untrusted: odd lines are counted and skipped, odd
values are absent, odd text is shown harmless, and git is never handed what it could misread."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import timedelta
from pathlib import Path

from aidd.project.paths import ProjectPaths
from aidd.reports.morning.build import build_report
from aidd.reports.morning.html import render_html
from aidd.reports.morning.jsonform import report_json
from aidd.reports.morning.text import render_text
from tests.planted import plant
from tests.unit.reports.night import START, Night

NOW = START + timedelta(hours=8)


def _line(ts: str, event: str, **fields: object) -> str:
    return json.dumps({"v": 1, "ts": ts, "run": "20261124T220000Z-1", "event": event,
                       **fields})


def _write(root: Path, *lines: str | bytes) -> None:
    path = root / ".automaker" / "events.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(x.encode() if isinstance(x, str) else x for x in lines))


def test_lines_that_are_no_event_are_counted_and_values_of_the_wrong_type_are_absent(
        tmp_path: Path) -> None:
    _write(tmp_path,
           _line("2026-11-24T22:00:00.000Z", "run_start"),
           "not json", "[1, 2]", "{" * 100_000, b"\xff\xfe",
           _line("not a time", "iteration_end", number=1, result=0),
           _line("2026-11-24T22:01:00.000Z", "iteration_end", number="one", result=0),
           _line("2026-11-24T22:02:00.000Z", "iteration_end", number=2, result=True),
           _line("2026-11-24T22:03:00.000Z", "iteration_end", number=3, result=71,
                 outcome="failure", reason=["x"], duration_s="long",
                 tokens={"input": -5, "output": 1e300, "x": 1, "cache_read": 7},
                 cost_usd=float("nan")),
           _line("2026-11-24T22:04:00.000Z", "rate_limit_sleep", seconds=float("inf")),
           _line("2026-11-24T22:05:00.000Z", "gate", name={"a": 1}, ok="yes"),
           _line("2026-11-24T22:06:00.000Z", "checkpoint", number=3, label="003",
                 ref="refs/aidd/x", commit="--output=/tmp/pwned"),
           '{"v": 1, "ts": "2026-11-24T22:07:00.000Z", "run": "20261124T220000Z-1", "ev')
    report = build_report(ProjectPaths(tmp_path), None, NOW, os.environ)
    assert report.events.skipped == 6  # four bad lines, one without a time, the torn last one
    (attempt,) = report.attempts
    assert (attempt.number, attempt.result, attempt.reason, attempt.cost_usd) == (
        3, 71, "unknown", None)
    assert report.usage.tokens["cache_read"] == 7
    assert report.usage.total_tokens == 7
    assert report.pauses.rate_limit_s == 0
    assert report.gate.commands == ()
    assert report.checkpoints == ()
    assert "6 skipped" in render_text(report).split("## Events")[1]
    json.dumps(report_json(report), allow_nan=False)  # no NaN or Infinity reaches the JSON


def test_text_from_the_project_cannot_drive_a_terminal_or_the_page(tmp_path: Path) -> None:
    evil = "\x1b]0;pwned\x07<script>alert(1)</script>\u202eevil\ud83d"
    _write(tmp_path,
           _line("2026-11-24T22:00:00.000Z", "run_start"),
           _line("2026-11-24T22:03:00.000Z", "iteration_end", number=1, result=72,
                 outcome="failure", reason=evil, duration_s=5),
           _line("2026-11-24T22:04:00.000Z", "gate", number=1, name=evil, ok=False,
                 new_failures=1, new=[evil]),
           _line("2026-11-24T22:05:00.000Z", "run_end", reason=evil, exit_code=1,
                 duration_s=10))
    feature = tmp_path / ".automaker" / "features" / "x\x1b[2J" / "feature.json"
    feature.parent.mkdir(parents=True)
    feature.write_text(json.dumps({"id": "x", "title": evil, "passes": True}))
    report = build_report(ProjectPaths(tmp_path), "12h", NOW, os.environ)
    text, page = render_text(report), render_html(report)
    for shown in (text, page, json.dumps(report_json(report), ensure_ascii=False)):
        assert "\x1b" not in shown
        assert "\u202e" not in shown
        shown.encode("utf-8")  # no lone surrogate
    assert "<script>" not in page
    assert "&lt;script&gt;" in page


def test_a_planted_commit_id_never_reaches_git_and_missing_commits_are_no_error(
        tmp_path: Path) -> None:
    night = Night(tmp_path)
    night.start_run()
    night.attempt(features={"a": True})
    night.emit("checkpoint", number=2, label="002", ref="refs/aidd/checkpoints/x/002",
               commit="0" * 40, files=0, duration_s=0.0)
    night.emit("checkpoint", number=2, label="002-end", ref="refs/aidd/checkpoints/y/002-end",
               commit="-" * 40, files=0, duration_s=0.0)
    night.end_run()
    report = build_report(night.paths, None, night.clock.now(), os.environ)
    assert [p.feature for p in report.features.passed] == ["a"]
    assert report.features.source == "checkpoints"  # the missing one is left out, no more
    assert [c.commit for c in report.checkpoints][-1] == "0" * 40  # "-" * 40 never got in


def test_a_report_is_read_only_and_runs_no_hook(tmp_path: Path) -> None:
    night = Night(tmp_path)
    hook = tmp_path / ".git" / "hooks" / "post-checkout"
    hook.write_text("#!/bin/sh\ntouch hooked\n")
    hook.chmod(0o755)
    night.start_run()
    night.attempt(features={"a": True}, commit="work")
    night.end_run()
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")
                    if ".git" not in p.parts)
    build_report(night.paths, None, night.clock.now(), os.environ)
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if ".git" not in p.parts)
    assert after == before



def test_a_symlinked_automaker_never_leads_the_report_out_of_the_project(
        tmp_path: Path) -> None:
    other = tmp_path / "other" / ".automaker"
    _write(other.parent, _line("2026-11-24T22:00:00.000Z", "run_start"),
           _line("2026-11-24T22:03:00.000Z", "iteration_end", number=1, result=0))
    project = tmp_path / "project"
    project.mkdir()
    plant(project / ".automaker", "symlink", other)
    report = build_report(ProjectPaths(project), None, NOW, os.environ)
    assert report.attempts == ()
    assert report.events.error is not None
    assert "outside the project" in report.events.error


def test_a_commit_dated_past_any_calendar_is_no_commit_of_the_night(tmp_path: Path) -> None:
    """A commit time is a number from the project (issue 27): git takes a date in year 318857,
    which crashed the report with ValueError."""
    night = Night(tmp_path)
    night.start_run()
    night.attempt(commit="feat: an honest commit")
    env = {**os.environ, "GIT_AUTHOR_DATE": "@9999999999999 +0000",
           "GIT_COMMITTER_DATE": "@9999999999999 +0000", "GIT_AUTHOR_NAME": "a",
           "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@x"}
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "from the far future"],
                   cwd=tmp_path, env=env, check=True)
    night.end_run()
    report = build_report(ProjectPaths(tmp_path), None, NOW, os.environ)  # raised before
    assert "from the far future" not in render_text(report) + render_html(report)
    assert report.attempts
