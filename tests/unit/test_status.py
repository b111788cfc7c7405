"""The status report (FEA-30..35, AC-66): counts, categories, TODOs, markers, run, JSON."""

from __future__ import annotations

import json
import os
import re
import stat
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from aidd.errors import NotFoundError
from aidd.project.filters import FeatureFilter, parse_field_filter
from aidd.project.paths import ProjectPaths
from aidd.reports.status import StatusFile, build_status, write_status
from aidd.reports.statusjson import status_json
from aidd.reports.statustext import render_status_text
from tests.fakes.clock import FakeClock
from tests.featurefiles import feat, write

NOW = datetime(2026, 11, 21, 23, 5, 1, tzinfo=timezone(timedelta(hours=1)))


@pytest.fixture
def paths(tmp_path: Path) -> ProjectPaths:
    p = ProjectPaths(tmp_path / "shop")
    p.features.mkdir(parents=True)
    return p


@pytest.fixture
def fixture(paths: ProjectPaths) -> ProjectPaths:
    """AC-66: nine counted features, two invalid files, two findings, a todo.md."""
    write(paths, "f1", feat("feature-1-a", passes=True, status="completed", priority=1))
    write(paths, "f2", feat("feature-2-b", passes=True, status="completed", priority=2))
    write(paths, "f3", feat("feature-3-c", passes=False, status="in_progress", priority=1))
    write(paths, "f4", feat("feature-4-d", status="backlog", priority=3, category="Billing"))
    write(paths, "f5", feat("feature-5-e", priority=4, category="Billing",
                            dependencies=["feature-3-c"]))  # fmt: skip
    write(paths, "f6", feat("feature-6-f", status="waiting_approval", category="UI"))
    write(paths, "f7", feat("feature-7-g", passes=True, status="waiting_approval", category="UI",
                            priority=9))  # fmt: skip
    write(paths, "f8", feat("feature-8-h", status="verified", category="Zeta", priority=2))
    write(paths, "f9", feat("feature-9-i", passes=True, status="backlog", category="Billing"))
    write(paths, "bad", "{broken")
    write(paths, "bad-type", feat("feature-10-j", status="verified", priority="high"))
    write(paths, "audit-sec-1-x", feat("audit-sec-1-x", passes=True, status="completed"))
    write(paths, "audit-sec-2-y", "{")
    paths.todo.write_text("- [x] one\n- [ ] two\n  - [ ] three\n- [~] four\n# TODO: five\n")
    return paths


def test_counts(fixture: ProjectPaths) -> None:
    c = build_status(fixture, None, NOW).counts
    assert (c.total, c.done, c.failing, c.in_progress) == (9, 3, 4, 1)
    assert (c.waiting_approval, c.open, c.closed, c.invalid) == (2, 3, 2, 2)
    assert (c.verified, c.blocked) == (1, 1)
    assert c.complete_pct == 33


def test_reopened_running_and_failed_count_as_the_board_shows_them(paths: ProjectPaths) -> None:
    """Issue 31 items 1-4: a verified feature reopened on the board (AutoMaker writes only the
    status, never clears `passes`) is in progress and blocks its dependant; `running` is in the
    Backlog; `failed` waits for a person."""
    write(paths, "a", feat("feature-1-a", passes=True, status="in_progress"))
    write(paths, "b", feat("feature-2-b", status="verified", dependencies=["feature-1-a"]))
    write(paths, "c", feat("feature-3-c", status="running"))
    write(paths, "d", feat("feature-4-d", status="failed", passes=True))
    write(paths, "e", feat("feature-5-e", status="pending", dependencies=["feature-1-a"]))
    c = build_status(paths, None, NOW).counts
    assert (c.total, c.done, c.in_progress, c.open, c.waiting_person) == (5, 1, 1, 2, 1)
    assert (c.failing, c.blocked) == (3, 1)
    assert re.search(r"\nWaiting for a person: +1\n", render_status_text(build_status(paths, None,
                                                                                       NOW)))


def test_categories_every_one_by_count_then_name(fixture: ProjectPaths) -> None:
    rows = build_status(fixture, None, NOW).categories
    assert [(r.name, r.total, r.priority) for r in rows] == [
        ("Billing", 3, (0, 0, 2, 1)),  # aidd's old 4 (low) shows as Low, as on the board
        ("Core", 3, (2, 1, 0, 0)),
        ("UI", 2, (0, 0, 0, 2)),
        ("Zeta", 1, (0, 1, 0, 0)),
    ]


def test_findings_todo_markers(fixture: ProjectPaths) -> None:
    fixture.completion_pending.write_text(NOW.isoformat() + "\n")
    report = build_status(fixture, None, NOW)
    assert (report.findings_total, report.findings_unfixed) == (2, 1)
    assert report.todo.file == ".automaker/todo.md"
    assert report.todo.summary is not None
    assert report.todo.summary.total == 4
    assert report.markers.pending_since == NOW.isoformat()
    assert report.markers.completed_at is None


def test_text_report(fixture: ProjectPaths) -> None:
    text = render_status_text(build_status(fixture, None, NOW))
    lines = text.splitlines()
    assert lines[0] == "# aidd status: shop"
    for expected in [
        "Total features:       9",
        "Done:                 3",
        "Not done:             4",
        "In progress:          1",
        "Waiting approval:     2",
        "Open:                 3",
        "Blocked:              1",
        "Verified:             1",
        "Completed (archived): 2",
        "Invalid files:        2",
        "Complete:             33%",
        "Category  Total  High  Medium  Low  Other",
        "Billing       3     0       0    2      1",
        "## TODO (.automaker/todo.md)",
        "TODO: markers: 1",
        "Pending since: -",
        "Not running.",
    ]:
        assert expected in lines, expected
    assert "### Incomplete\n- two\n- three\n\n### Deferred\n- four\n\n### Completed\n- one" in text


def test_filters_apply_to_counts_and_title(fixture: ProjectPaths) -> None:
    billing = FeatureFilter(field=parse_field_filter("category", "Billing"))
    report = build_status(fixture, billing, NOW)
    c = report.counts
    # the unparsable file cannot be filtered out by its fields: it stays counted as invalid
    assert (c.total, c.done, c.failing, c.open, c.invalid) == (3, 0, 3, 3, 1)
    assert [r.name for r in report.categories] == ["Billing"]
    assert (report.findings_total, report.findings_unfixed) == (2, 1)  # filters skip findings
    text = render_status_text(report)
    assert text.startswith("# aidd status: shop (filters: category=Billing)\n")
    assert status_json(report)["filters"] == {
        "field": "category", "value": "Billing", "milestone": None, "feature": None,
    }  # fmt: skip
    passes_false = FeatureFilter(field=parse_field_filter("passes", "false"))
    assert build_status(fixture, passes_false, NOW).counts.total == 6  # not done: f3-f7, f9
    assert status_json(build_status(fixture, FeatureFilter(), NOW))["filters"] is None


def test_empty_features_gives_zeros(paths: ProjectPaths) -> None:
    report = build_status(paths, None, NOW, require_features=True)
    doc = status_json(report)
    assert doc["features"] == {"total": 0, "done": 0, "passing": 0, "failing": 0,
                               "in_progress": 0, "waiting_approval": 0, "waiting_person": 0,
                               "open": 0, "closed": 0,
                               "verified": 0, "blocked": 0, "invalid": 0,
                               "complete_pct": 0}  # fmt: skip
    assert doc["categories"] == []
    assert doc["todo"]["file"] is None
    text = render_status_text(report)
    assert "Complete:             0%" in text
    assert "(no features)" in text
    assert "No TODO file found (searched .automaker/todo.md, todo.md, todos.md" in text


def test_missing_features_dir(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    with pytest.raises(NotFoundError):
        build_status(paths, None, NOW, require_features=True)
    report = build_status(paths, None, NOW)
    assert report.counts.total == 0
    assert "Note: .automaker/features does not exist yet" in render_status_text(report)


def test_json_schema_matches_fea_35_and_the_text(fixture: ProjectPaths) -> None:
    report = build_status(fixture, None, NOW)
    doc = status_json(report)
    json.dumps(doc)  # serialisable
    assert list(doc) == ["schema", "generated_at", "project", "filters", "features",
                         "categories", "findings", "todo", "completion", "run",
                         "health"]  # fmt: skip
    assert doc["schema"] == 2
    assert doc["generated_at"] == "2026-11-21T23:05:01+01:00"
    assert doc["project"] == {"dir": str(fixture.root.absolute()), "name": "shop"}
    assert doc["filters"] is None
    assert list(doc["features"]) == ["total", "done", "passing", "failing", "in_progress",
                                     "waiting_approval", "waiting_person", "open", "closed",
                                     "verified",
                                     "blocked", "invalid", "complete_pct"]  # fmt: skip
    assert doc["features"]["passing"] == doc["features"]["done"]
    assert doc["categories"][0] == {
        "name": "Billing", "total": 3,
        "priority": {"high": 0, "medium": 0, "low": 2, "other": 1},
    }  # fmt: skip
    assert doc["findings"] == {"total": 2, "unfixed": 1}
    assert doc["todo"] == {
        "file": ".automaker/todo.md", "total": 4, "completed": 1, "incomplete": 2,
        "deferred": 1, "markers": 1, "complete_pct": 25,
        "items": {"incomplete": ["two", "three"], "deferred": ["four"], "completed": ["one"]},
    }  # fmt: skip
    assert doc["completion"] == {"pending_since": None, "completed_at": None}
    assert doc["run"] == {"running": False, "pid": None, "started_at": None,
                          "paused_until": None, "stop_requested": False,
                          "last_iteration": None}  # fmt: skip
    text = render_status_text(report)
    for key, label in [("total", "Total features"), ("done", "Done"),
                       ("failing", "Not done"), ("invalid", "Invalid files")]:  # fmt: skip
        assert f"{label + ':':<22}{doc['features'][key]}" in text


def test_root_todo_file_is_shown(paths: ProjectPaths) -> None:
    (paths.root / "TODO.md").write_text("- [x] a\n")
    report = build_status(paths, None, NOW)
    assert report.todo.file == "TODO.md"
    assert "## TODO (TODO.md)" in render_status_text(report)


def test_write_status_is_atomic(paths: ProjectPaths) -> None:
    text = render_status_text(build_status(paths, None, NOW))
    write_status(paths, text)
    write_status(paths, text)
    assert paths.status.read_text() == text
    assert not [p for p in paths.automaker.iterdir() if p.name.startswith(".aidd-tmp")]


def test_a_run_rewrites_status_md_with_no_new_file(paths: ProjectPaths,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: a run rewrites status.md before each attempt (FEA-30); the file it replaced
    is kept as the next text's temp file, so after the first two no file is made, each text
    is whole (0644), and the run's end leaves no temp name."""
    out = StatusFile(paths)
    out.write("one\n")
    paths.status.chmod(0o600)
    out.write("two\n")
    made: list[object] = []
    real_open = os.open

    def spied(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT:
            made.append(path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", spied)
    for text in ("three\n", "four\n"):  # three: in the file that was 0600
        out.write(text)
        assert paths.status.read_text() == text
        assert stat.S_IMODE(paths.status.stat().st_mode) == 0o644
    assert made == []
    out.close()
    assert sorted(p.name for p in paths.automaker.iterdir()) == ["features", "status.md"]


def test_the_kept_file_is_written_only_while_it_is_the_runs_alone(paths: ProjectPaths,
                                                                 tmp_path: Path) -> None:
    """The kept file has a temp name in .automaker/: one given a second name, swapped for a
    link, or removed is never written through; a new file is made, status.md whole."""
    outside = tmp_path / "outside.txt"
    outside.write_text("mine\n")
    out = StatusFile(paths)
    out.write("one\n")
    out.write("two\n")

    def kept() -> Path:
        (name,) = [p for p in paths.automaker.iterdir() if p.name.startswith(".aidd-tmp-")]
        return name

    os.link(kept(), tmp_path / "second-name")  # the old "one\n"
    out.write("three\n")
    swapped = kept()  # the old "two\n"
    swapped.unlink()
    swapped.symlink_to(outside)
    out.write("four\n")
    kept().unlink()
    out.write("five\n")
    assert (tmp_path / "second-name").read_text() == "one\n"
    assert outside.read_text() == "mine\n"
    assert paths.status.read_text() == "five\n"
    out.close()
    assert not [p for p in paths.automaker.iterdir() if p.name.startswith(".aidd-tmp-")]


# --- run state ------------------------------------------------------------------------------


def lock(paths: ProjectPaths, **fields: Any) -> None:
    paths.lock.write_text(json.dumps(fields))


def own_start_ticks() -> int | None:
    try:
        stat = Path(f"/proc/{os.getpid()}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rfind(")") + 2 :].split()[19])


def events(paths: ProjectPaths, *records: dict[str, Any], torn: bool = False) -> None:
    text = "".join(json.dumps(r) + "\n" for r in records)
    paths.events.write_text(text + ('{"event": "iteration_e' if torn else ""))


def test_running_with_pause_and_last_iteration(paths: ProjectPaths) -> None:
    pid = os.getpid()
    run = f"20261121T220501Z-{pid}"
    lock(paths, pid=pid, pid_start=own_start_ticks(), host=os.uname().nodename,
         started_at="2026-11-21T23:00:00+01:00", argv=["aidd"])  # fmt: skip
    until = (NOW + timedelta(minutes=5)).isoformat()
    events(
        paths,
        {"event": "iteration_end", "run": "old-1", "number": 3, "result": 0,
         "outcome": "success", "ts": "2026-11-20T10:00:00.000Z"},
        {"event": "iteration_end", "run": run, "number": 7, "result": 74,
         "outcome": "rate_limited", "ts": "2026-11-21T22:04:00.000Z"},
        {"event": "rate_limit_sleep", "run": run, "until": until, "seconds": 300},
        {"event": "warning", "run": run, "message": "x"},
        torn=True,
    )  # fmt: skip
    report = build_status(paths, None, NOW)
    assert status_json(report)["run"] == {
        "running": True, "pid": pid, "started_at": "2026-11-21T23:00:00+01:00",
        "paused_until": until, "stop_requested": False,
        "last_iteration": {"number": 7, "result": 74, "outcome": "rate_limited",
                           "ended_at": "2026-11-21T22:04:00.000Z"},
    }  # fmt: skip
    text = render_status_text(report)
    assert f"Running: pid {pid}, started 2026-11-21T23:00:00+01:00." in text
    assert f"Paused until {until} (rate limit)." in text
    assert "Last iteration: 7, rate_limited (result 74), ended 2026-11-21T22:04:00.000Z." in text


def test_the_running_runs_slots_are_shown_as_lanes(paths: ProjectPaths) -> None:
    """--parallel N (issue 29): one lane per slot of the running run only: a slot that took its
    next feature (`slot_start`) shows it before its first attempt."""
    pid = os.getpid()
    run = f"20261121T220501Z-{pid}"
    lock(paths, pid=pid, pid_start=own_start_ticks(), host=os.uname().nodename,
         started_at="2026-11-21T23:00:00+01:00", argv=["aidd"])  # fmt: skip
    events(
        paths,
        {"event": "iteration_start", "run": "old-1", "number": 1, "slot": 3, "feature": "old"},
        {"event": "run_start", "run": run},
        {"event": "iteration_start", "run": run, "number": 1, "slot": 1, "feature": "f1"},
        {"event": "iteration_start", "run": run, "number": 2, "slot": 2, "feature": "f2"},
        {"event": "iteration_end", "run": run, "number": 1, "slot": 1, "feature": "f1"},
        {"event": "merge", "run": run, "number": 1, "slot": 1, "feature": "f1",
         "reason": "conflict"},
        {"event": "slot_start", "run": run, "slot": 1, "feature": "f3\x1b[2J"},
        {"event": "iteration_start", "run": run, "number": 4},
    )  # fmt: skip
    report = build_status(paths, None, NOW)
    assert [(lane["slot"], lane["feature"], lane["attempt"], lane["working"])
            for lane in status_json(report)["run"]["lanes"]] == [
        (1, "f3\x1b[2J", None, True), (2, "f2", 2, True)]
    text = render_status_text(report)
    assert "- slot 1: f3\\x1b[2J, attempt -, working since" in text  # a control char escaped
    assert "- slot 2: f2, attempt 002, working since" in text
    assert "slot 3" not in text


def test_a_stop_request_is_said(paths: ProjectPaths) -> None:
    """Issue 28: --status says a stop was requested, for a run going on and for none."""
    paths.stop.write_text("2026-11-21T22:00:00+00:00\n")
    report = build_status(paths, None, NOW)
    assert status_json(report)["run"]["stop_requested"] is True
    assert "A stop request waits in .automaker/.stop" in render_status_text(report)
    lock(paths, pid=os.getpid(), pid_start=own_start_ticks(), host=os.uname().nodename)
    report = build_status(paths, None, NOW)
    assert "Stop requested: the run ends after its current agent run (exit 6)." in (
        render_status_text(report))


def test_pause_over_once_an_iteration_starts(paths: ProjectPaths) -> None:
    pid = os.getpid()
    run = f"x-{pid}"
    lock(paths, pid=pid)
    until = (NOW + timedelta(minutes=5)).isoformat()
    events(paths, {"event": "rate_limit_sleep", "run": run, "until": until},
           {"event": "iteration_start", "run": run, "number": 8})  # fmt: skip
    assert build_status(paths, None, NOW).run.paused_until is None
    events(paths, {"event": "rate_limit_sleep", "run": run, "until": NOW.isoformat()})
    assert build_status(paths, None, NOW).run.paused_until is None  # already past


def test_stale_lock_is_not_running(paths: ProjectPaths) -> None:
    ticks = own_start_ticks()
    if ticks is None:
        pytest.skip("needs /proc")
    lock(paths, pid=os.getpid(), pid_start=ticks + 1)  # the pid was reused
    assert build_status(paths, None, NOW).run.running is False
    lock(paths, pid=2**22 + 12345)
    run = build_status(paths, None, NOW).run
    assert (run.running, run.pid, run.started_at) == (False, None, None)
    paths.lock.write_text("{torn")
    assert build_status(paths, None, NOW).run.running is False


def test_lock_of_another_host_is_unknown(paths: ProjectPaths) -> None:
    lock(paths, pid=1, host="elsewhere.example")
    report = build_status(paths, None, NOW)
    assert status_json(report)["run"]["running"] is None
    assert "Unknown: the lock names pid 1 on another host." in render_status_text(report)


def test_print_status_text_and_json(
    fixture: ProjectPaths, capsys: pytest.CaptureFixture[str]
) -> None:
    from aidd.errors import ExitCode
    from aidd.reports.status import print_status

    assert print_status(fixture, None, clock=FakeClock(NOW)) is ExitCode.SUCCESS
    text = capsys.readouterr().out
    assert fixture.status.read_text() == text
    assert print_status(fixture, None, as_json=True, clock=FakeClock(NOW)) is ExitCode.SUCCESS
    doc = json.loads(capsys.readouterr().out)
    assert doc["features"]["total"] == 9
    assert fixture.status.read_text() == text  # status.md always holds the text form


def test_print_status_without_features_dir(tmp_path: Path) -> None:
    from aidd.reports.status import print_status

    with pytest.raises(NotFoundError):
        print_status(ProjectPaths(tmp_path), None)
    assert not (tmp_path / ".automaker").exists()


def test_the_json_gives_the_health_verdict_of_the_newest_run(paths: ProjectPaths) -> None:
    assert status_json(build_status(paths, None, NOW))["health"] is None
    old, new = "20261120T100000Z-1", "20261121T220501Z-2"
    events(paths, {"event": "run_start", "run": old},
           {"event": "stuck", "run": old, "iterations": [1, 2, 3]},
           {"event": "run_end", "run": old, "reason": "done", "exit_code": 0},
           {"event": "run_start", "run": new},
           {"event": "iteration_end", "run": new, "number": 4, "outcome": "failure",
            "reason": "provider_error", "result": 72},
           {"event": "run_end", "run": new, "reason": "done", "exit_code": 0})  # fmt: skip
    health = status_json(build_status(paths, None, NOW))["health"]
    assert (health["run"], health["verdict"]) == (new, "failed")  # the old run's stuck is not
    assert [r["kind"] for r in health["reasons"]] == ["provider_error"]
    assert f"--project-dir {paths.root}" in health["reasons"][0]["next"]
