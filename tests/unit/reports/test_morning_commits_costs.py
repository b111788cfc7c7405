"""The morning report names the commit each attempt made and never prices the unknown at $0
(issue 28, item 8), alike in its text, JSON and HTML."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from aidd.reports.morning.build import build_report
from aidd.reports.morning.html import render_html
from aidd.reports.morning.jsonform import report_json
from aidd.reports.morning.record import MorningReport
from aidd.reports.morning.text import render_text
from tests.unit.reports.night import SINCE, Night


def _report(night: Night) -> MorningReport:
    return build_report(night.paths, SINCE, night.clock.now() + timedelta(minutes=1),
                        os.environ)


def _quick_night(root: Path) -> tuple[Night, dict[str, str]]:
    """Three attempts a second apart, as the fake agent runs them: the first two each pass a
    feature and commit it, the third passes one without a commit."""
    night = Night(root)
    night.start_run()
    night.attempt(kind="initializer", features={"alpha": False, "beta": False, "gamma": False},
                  seconds=1, gap=0.5)
    night.attempt(features={"alpha": True}, files={"a.py": "a\n"}, commit="feat: alpha",
                  seconds=1, gap=0.5)
    night.attempt(features={"beta": True}, files={"b.py": "b\n"}, commit="feat: beta",
                  seconds=1, gap=0.5)
    night.attempt(features={"gamma": True}, files={"c.py": "c\n"}, seconds=1, gap=0.5)
    night.end_run()
    shas = {s: night.git("log", "-1", "--format=%H", "--grep", s) for s in ("alpha", "beta")}
    return night, shas


def test_each_feature_is_reported_with_the_commit_its_attempt_made(tmp_path: Path) -> None:
    night, shas = _quick_night(tmp_path)
    report = _report(night)
    passed = {p.feature: (p.number, p.commit, p.subject) for p in report.features.passed}
    assert passed == {"alpha": (2, shas["alpha"], "feat: alpha"),
                      "beta": (3, shas["beta"], "feat: beta"), "gamma": (4, None, None)}
    text = {line.split()[0]: line.split()[1:] for line in render_text(report).splitlines()
            if line.split()[:1] in (["alpha"], ["beta"], ["gamma"])}
    # feature, attempt, date, time, then the commit and its subject, or the checkpoint
    assert [(text[f][0], text[f][3:]) for f in ("alpha", "beta", "gamma")] == [
        ("002", [shas["alpha"][:12], "feat:", "alpha"]),
        ("003", [shas["beta"][:12], "feat:", "beta"]), ("004", ["004-end"])]
    rows = {r["feature"]: r for r in report_json(report)["features"]["became_passing"]}
    assert (rows["alpha"]["commit"], rows["beta"]["commit"]) == (shas["alpha"], shas["beta"])
    assert rows["gamma"]["commit"] is None
    assert rows["gamma"]["checkpoint"].endswith("/004-end")
    page = render_html(report)
    assert f"{shas['alpha'][:12]} feat: alpha" in page
    assert f"{shas['beta'][:12]} feat: beta" in page


def test_a_commit_id_a_checkpoint_event_names_must_be_one_git_listed(tmp_path: Path) -> None:
    """events.jsonl is project content: a `head` naming another commit names none."""
    night = Night(tmp_path)
    night.start_run()
    night.attempt(kind="initializer", features={"alpha": False})
    night.attempt(features={"alpha": True}, commit="feat: alpha")
    night.end_run()
    events = night.paths.events
    real = night.git("rev-parse", "HEAD")
    lines = [line.replace(real, "f" * 40) if '"002-end"' in line else line
             for line in events.read_text().splitlines()]
    events.write_text("\n".join(lines) + "\n")
    assert "f" * 40 in events.read_text()
    (alpha,) = _report(night).features.passed
    assert (alpha.number, alpha.commit) == (2, None)


def test_an_unknown_cost_reads_unknown_never_zero(tmp_path: Path) -> None:
    night = Night(tmp_path)
    night.start_run()
    night.attempt(cost=None)
    night.attempt(cost=None)
    night.end_run()
    report = _report(night)
    assert "cost      unknown: $0.00 reported" in render_text(report)
    usage = report_json(report)["usage"]
    assert usage["cost_usd"]["total"] is None
    assert usage["cost_usd"]["complete"] is False
    page = render_html(report)
    assert "<b>unknown</b><span>cost</span>" in page
    assert "<p>cost unknown:" in page
    assert "<b>$0.00</b><span>cost</span>" not in page


def test_a_partly_known_cost_is_a_lower_bound(tmp_path: Path) -> None:
    night = Night(tmp_path)
    night.start_run()
    night.attempt(cost=1.5)
    night.attempt(cost=None)
    night.end_run()
    report = _report(night)
    assert "cost      ≥ $1.50, some unknown: $1.50 reported" in render_text(report)
    usage = report_json(report)["usage"]
    assert (usage["cost_usd"]["total"], usage["cost_usd"]["complete"]) == (1.5, False)
    assert "<b>≥ $1.50, some unknown</b>" in render_html(report)


def test_a_known_cost_is_shown_as_it_was(tmp_path: Path) -> None:
    night = Night(tmp_path)
    night.start_run()
    night.attempt(cost=0.0)
    night.end_run()
    report = _report(night)
    assert "cost      $0.00: $0.00 reported" in render_text(report)
    assert report_json(report)["usage"]["cost_usd"] == {
        "reported": 0.0, "estimated": 0.0, "total": 0.0, "complete": True}
