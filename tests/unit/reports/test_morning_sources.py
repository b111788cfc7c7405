"""Where the report's answers come from when the night was not the usual one: no checkpoints,
a project without git, a log of many nights, a run still going or killed."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest

from aidd.reports.morning.build import build_report
from aidd.reports.morning.reading import read_window
from aidd.session import procfs
from tests.unit.reports.night import START, Night


def test_without_checkpoints_a_feature_passing_now_is_put_in_the_attempt_that_changed_it(
        tmp_path: Path) -> None:
    night = Night(tmp_path, checkpoints=False)
    night.start_run()
    night.attempt(features={"a": False, "b": False})
    night.attempt(features={"a": True}, commit="feat: a")
    # the file times are the real clock's: give them the fake night's
    stamp = (START + timedelta(minutes=15)).timestamp()
    os.utime(tmp_path / ".automaker/features/a/feature.json", (stamp, stamp))
    os.utime(tmp_path / ".automaker/features/b/feature.json", (stamp - 86400, stamp - 86400))
    night.end_run()
    report = build_report(night.paths, None, night.clock.now(), os.environ)
    assert report.features.source == "mtime"
    (passed,) = report.features.passed
    assert (passed.feature, passed.number, passed.subject) == ("a", 2, "feat: a")
    assert report.diffstat is not None
    assert report.diffstat.source == "git"
    assert report.checkpoints == ()


def test_a_project_without_git_has_its_checkpoints_in_the_private_repository(
        tmp_path: Path) -> None:
    night = Night(tmp_path, git_project=False)
    night.start_run()
    night.attempt(features={"a": False})
    night.attempt(features={"a": True}, files={"src/a.py": "a\n"})
    night.end_run()
    report = build_report(night.paths, None, night.clock.now(), os.environ)
    assert (tmp_path / ".automaker" / "checkpoints.git").is_dir()
    assert [(p.feature, p.number, p.commit) for p in report.features.passed] == [("a", 2, None)]
    assert report.diffstat is not None
    assert {c.path for c in report.diffstat.top} >= {"src/a.py"}


def test_no_git_no_checkpoints_no_features_is_still_a_report(tmp_path: Path) -> None:
    night = Night(tmp_path, git_project=False, checkpoints=False)
    night.start_run()
    night.attempt()
    night.end_run()
    report = build_report(night.paths, None, night.clock.now(), os.environ)
    assert (report.diffstat, report.features.source, len(report.attempts)) == (None, "none", 1)


def test_older_nights_are_skipped_unparsed_but_their_runs_keep_both_ends(
        tmp_path: Path) -> None:
    night = Night(tmp_path, git_project=False, checkpoints=False)
    night.start_run(1)
    for _ in range(3):
        night.attempt()
    night.end_run()
    night.clock.advance(86400)
    night.start_run(2)
    night.attempt()
    night.end_run()
    path = night.paths.events
    with path.open("a") as log:  # a broken line in the old night: never looked at
        log.write('{"v": 1, "ts": "2026-11-24T22:30:00.000Z", "run": "x", "event": 5}\n')
    read = read_window(path, "last-run", night.clock.now())
    names = [e["event"] for e, _ in read.events]
    assert names.count("run_start") == 2
    assert names.count("iteration_end") == 1
    assert read.seen.lines == len(path.read_text().splitlines())
    assert read.seen.in_window == len(names) - 2  # the old run's start and end are outside


@pytest.mark.parametrize("running", [True, False])
def test_a_run_without_run_end_is_running_or_was_killed(tmp_path: Path, running: bool) -> None:
    night = Night(tmp_path, git_project=False, checkpoints=False)
    pid = os.getpid() if running else 999_999
    night.start_run(pid)
    night.attempt(71, reason="idle_timeout")
    if running:  # this very process holds the lock, as a running aidd does
        record = {"pid": pid, "pid_start": procfs.start_ticks(pid)}
        (tmp_path / ".automaker" / "aidd.lock").write_text(json.dumps(record) + "\n")
    report = build_report(night.paths, None, night.clock.now(), os.environ)
    (run,) = report.runs
    assert run.reason == ("running" if running else "no run_end")
    kinds = [r.kind for r in report.health.reasons]
    assert ("run_died" in kinds) is not running



def test_a_feature_file_nested_deeper_is_no_feature(tmp_path: Path) -> None:
    """Only features/<dir>/feature.json is a feature, for aidd as for AutoMaker (issue 18)."""
    night = Night(tmp_path)
    night.start_run()
    night.attempt(features={"a": False, "group/nested": False})
    night.attempt(features={"a": True, "group/nested": True})
    night.end_run()
    report = build_report(night.paths, None, night.clock.now(), os.environ)
    assert report.features.source == "checkpoints"
    assert [p.feature for p in report.features.passed] == ["a"]
