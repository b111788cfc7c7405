"""Issue 28 item 3: "Look at first" said "nothing stands out" for a run with a provider error,
a no-work attempt and 1 of 3 features still failing. Now it is the health verdict: each of
them once, with the next step, in the text, the JSON and the HTML alike."""

from __future__ import annotations

import json
import os
import re
from datetime import timedelta
from pathlib import Path

from aidd.reports.morning.build import build_report
from aidd.reports.morning.html import render_html
from aidd.reports.morning.jsonform import report_json
from aidd.reports.morning.text import render_text
from tests.unit.reports.night import Night


def _finding_3_night(root: Path) -> Night:
    night = Night(root, git_project=False, checkpoints=False)
    night.start_run()
    night.attempt(kind="initializer", features={"a": False, "b": False, "c": False})
    night.attempt(features={"a": True, "b": True})
    night.attempt(72, reason="provider_error")
    night.attempt(75, reason="no_work")
    night.end_run()
    return night


def test_a_provider_error_a_no_work_attempt_and_a_feature_left_are_looked_at_first(
        tmp_path: Path) -> None:
    night = _finding_3_night(tmp_path)
    report = build_report(night.paths, None, night.clock.now() + timedelta(minutes=5),
                          os.environ)
    text = render_text(report)
    first = text.split("## Look at first\n")[1].split("\n## ")[0]
    assert "nothing stands out" not in first
    lines = re.sub(r"\n +", " ", first).splitlines()  # one line per item, unwrapped
    assert lines[0] == "health: attention"
    for said in ("provider error (result 72): 003", "did nothing (result 75): 004",
                 "1 of 3 features not done at the end"):
        assert sum(said in line for line in lines) == 1, (said, first)
    where = f"--project-dir {tmp_path}"
    assert len(lines) == 4
    assert all(where in line.partition(" next: ")[2] for line in lines[1:])
    data = json.loads(json.dumps(report_json(report)))
    assert data["health"]["verdict"] == "attention"
    assert [r["kind"] for r in data["health"]["reasons"]] == ["provider_error", "no_work",
                                                               "features_left"]
    page = render_html(report)
    assert page.count("1 of 3 features not done at the end") == 1
    assert page.count(f"aidd --status {where}") == 2  # no work's next step, and features'


def test_set_aside_features_need_a_person_in_every_form(tmp_path: Path) -> None:
    """Issue 32: each feature a run set aside, with how its attempts ended, in the text, the
    JSON and the HTML; the run that ended on them is failed."""
    night = Night(tmp_path, git_project=False, checkpoints=False)
    night.start_run()
    for _ in range(3):
        night.attempt(3)
    night.emit("feature_set_aside", number=3, feature="cart\x1b[31m", attempts=[1, 2, 3],
               endings=["the CLI exited with status 3 (an error or a crash)"] * 3, limit=3)
    night.end_run("set_aside")
    report = build_report(night.paths, None, night.clock.now() + timedelta(minutes=5),
                          os.environ)
    text = render_text(report)
    part = text.split("## Needs a person: 1 feature set aside after attempts that ended the "
                      "same way\n")[1].split("\n## ")[0]
    assert part.splitlines()[0].startswith("cart\\x1b[31m (run ")
    assert "   002: the CLI exited with status 3 (an error or a crash)" in part
    data = json.loads(json.dumps(report_json(report)))
    (row,) = data["needs_person"]
    assert (row["feature"], row["attempts"], len(row["endings"])) == ("cart\\x1b[31m",
                                                                      [1, 2, 3], 3)
    assert data["health"]["verdict"] == "failed"
    assert data["health"]["reasons"][0]["kind"] == "ended_set_aside"
    page = render_html(report)
    assert page.count("<h2>Needs a person</h2>") == 1
    assert page.count("the CLI exited with status 3 (an error or a crash)") == 3
