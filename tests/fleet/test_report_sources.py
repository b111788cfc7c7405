"""Where `aidd fleet report` takes a project's line from: the server's progress of its latest
run when that run ran (at least partly) on another machine, or when this machine has no report
of it; else this machine's own aidd --report. Unknown figures print as unknown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio", reason="the fleet extra is not installed")

from aidd.fleet import report
from aidd.fleet.control import Row
from aidd.fleet.records import Progress, ProjectJob, State


def _job(path: Path) -> ProjectJob:
    return ProjectJob("lab", "p", str(path), "", "", "opencode", [], "")


def _row(**progress: Any) -> Row:
    return Row("lab", "p", State.DONE, Progress(**progress), exit_code=0)


RAN = {"ended": 3, "by_result": {"1": 1, "0": 2}, "cost_usd": 0.75, "costs_unknown": 0,
       "features_passing": 1, "features_total": 2, "last_end_at": "2026-11-26T01:02:03.000Z"}


def test_a_run_partly_elsewhere_is_the_servers_though_checked_out_here(tmp_path: Path) -> None:
    row = _row(hosts=["here", "hostB"], **RAN)
    [item] = report.gather([_job(tmp_path)], tmp_path, None, {"p": row}, "here")
    assert (item.source, item.report, item.error) == ("server", None, "")
    text = report.as_text("lab", [item]).splitlines()
    assert text[1] == ("p  done (exit 0) at 2026-11-26 01:02 on here, hostB · attempts 3 "
                       "(0×2 1×1) · features 1/2 passing · $0.75 (from the server)")
    got = json.loads(report.as_json("lab", [item]))["projects"][0]
    assert (got["source"], got["hosts"], got["state"], got["attempts"]) == (
        "server", ["here", "hostB"], "done", 3)
    assert got["by_result"] == [{"result": 0, "label": "success", "count": 2},
                                {"result": 1, "label": "exit 1", "count": 1}]


def test_a_run_here_with_no_report_here_is_the_servers(tmp_path: Path) -> None:
    row = _row(hosts=["here"], **RAN)
    [item] = report.gather([_job(tmp_path / "gone")], tmp_path, None, {"p": row}, "here")
    assert (item.source, item.error) == ("server", "")


def test_no_figures_anywhere_is_no_report(tmp_path: Path) -> None:
    queued = Row("lab", "p", State.QUEUED)  # the server has no figures: no host ran it
    [item] = report.gather([_job(tmp_path / "gone")], tmp_path, None, {"p": queued}, "here")
    assert (item.source, item.error) == (None, "no such directory")
    got = json.loads(report.as_json("lab", [item]))["projects"][0]
    assert (got["source"], got["hosts"], got["state"]) == (None, [], "queued")


def test_unknown_figures_print_as_unknown(tmp_path: Path) -> None:
    row = Row("lab", "p", State.RUNNING, Progress(hosts=["hostB"], ended=2,
                                                  by_result={"0": 2}, costs_unknown=2))
    [item] = report.gather([_job(tmp_path)], tmp_path, None, {"p": row}, "here")
    line = report.as_text("lab", [item]).splitlines()[1]
    assert line == ("p  running on hostB · attempts 2 (0×2) · features unknown · cost unknown "
                    "(from the server)")
    got = json.loads(report.as_json("lab", [item]))["projects"][0]
    assert (got["cost_usd"], got["features_passing"], got["last_run"]["exit_code"]) == (
        None, None, None)


def test_the_servers_word_on_the_run_is_on_its_line(tmp_path: Path) -> None:
    said = "stop requested, not applied: the run ended done (exit 0) before the stop took effect"
    row = Row("lab", "p", State.DONE, Progress(hosts=["hostB"], **RAN), 0, said)
    [item] = report.gather([_job(tmp_path)], tmp_path, None, {"p": row}, "here")
    assert report.as_text("lab", [item]).splitlines()[1].endswith(f"(from the server) · {said}")
    assert json.loads(report.as_json("lab", [item]))["projects"][0]["message"] == said


def test_a_local_line_covers_every_aidd_run_of_the_workflow_run(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    asked: list[list[str]] = []

    def aidd_report(argv: list[str], **_kwargs: Any) -> Any:
        asked.append(argv)
        return type("Done", (), {"returncode": 0, "stdout": "{}", "stderr": ""})()

    monkeypatch.setattr(report.subprocess, "run", aidd_report)
    row = Row("lab", "p", State.DONE, Progress(hosts=["here"]), 0,
              started="2026-11-26T01:00:00+00:00")
    queued = Row("lab", "p", State.QUEUED, started="2026-11-27T01:00:00+00:00")
    report.gather([_job(tmp_path)], tmp_path, None, {"p": row}, "here")
    report.gather([_job(tmp_path)], tmp_path, "22:00", {"p": row}, "here")
    report.gather([_job(tmp_path)], tmp_path, None, {"p": queued}, "here")
    assert [argv[-2:] for argv in asked] == [["--since", "2026-11-26T01:00:00+00:00"],
                                             ["--since", "22:00"], ["--report", "--json"]]


def test_the_html_page_holds_each_line_and_each_projects_look_at_first(tmp_path: Path) -> None:
    """Issue 28: `aidd fleet report --html FILE`: the text's figures as one self-contained
    page, each project's own health reasons with their next step, project strings escaped."""
    row = _row(hosts=["here", "hostB"], **RAN)
    [server] = report.gather([_job(tmp_path)], tmp_path, None, {"p": row}, "here")
    local = report.ProjectReport("q<script>", str(tmp_path), {
        "attempts": {"total": 4}, "features": {"passing_now": 2, "total_now": 3},
        "health": {"verdict": "failed", "reasons": [
            {"kind": "stuck", "what": "stuck after 3 attempts <b>",
             "next": "aidd --report --project-dir /p"}]}})
    page = report.as_html("lab", [server, local])
    assert page.startswith("<!doctype html>")
    assert "<script" not in page  # the CSP allows none, and a project's name is escaped
    assert "q&lt;script&gt;" in page
    assert "done (exit 0) at 2026-11-26 01:02" in page
    assert "<td>1/2</td>" in page
    assert "<td>$0.75</td>" in page
    assert "q&lt;script&gt;: look at first" in page
    assert "stuck after 3 attempts &lt;b&gt;; next: aidd --report --project-dir /p" in page
