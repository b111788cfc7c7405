"""The morning report of a `--parallel N` night (issue 29): one timeline row per slot, the
lanes and the merges (merged, conflict, merge_red) in text, JSON and HTML, from a synthesised
events.jsonl whose slots' attempts overlap; a night of one agent has none of it."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

from aidd.project.paths import ProjectPaths
from aidd.reports.morning.build import build_report
from aidd.reports.morning.html import render_html
from aidd.reports.morning.jsonform import report_json
from aidd.reports.morning.lanes import MAX_MERGES
from aidd.reports.morning.record import MorningReport
from aidd.reports.morning.svg import COLOURS
from aidd.reports.morning.text import render_text
from tests.unit.parallelrun import (
    START,
    end,
    event,
    jsonl,
    merge,
    parallel_run,
    run_start,
    start,
)

SINCE = "2026-11-27T00:59:00Z"


def _report(tmp_path: Path, events: list[dict[str, Any]]) -> MorningReport:
    paths = ProjectPaths(tmp_path / "shop")
    paths.features.mkdir(parents=True)
    paths.events.write_text(jsonl(events))
    return build_report(paths, SINCE, START + timedelta(hours=1), {})


def test_lanes_and_merges_in_text_and_json(tmp_path: Path) -> None:
    report = _report(tmp_path, parallel_run(ended=True))
    text = render_text(report)
    assert ("## Lanes: 3 slots (--parallel); merges: 3 merged, 0 nothing, 1 conflict, "
            "1 merge_red\n"
            "slot attempts      busy merged sent back  features\n"
            "   1        2    2m 49s      2         0  login, checkout\n"
            "   2        2     3m 7s      1         1  cart\n"
            "   3        2    3m 16s      0         1  search\n") in text
    assert "slot 2   002 cart                           conflict: src/app.py: content" in text
    assert "slot 3   003 search                         merge_red\n" in text
    data = report_json(report)
    assert data["parallel"]["merges"] == {"merged": 3, "nothing": 0, "conflict": 1,
                                          "merge_red": 1}
    assert [lane["features"] for lane in data["parallel"]["lanes"]] == [
        ["login", "checkout"], ["cart"], ["search"]]
    assert [(m["slot"], m["result"]) for m in data["parallel"]["merge_list"]] == [
        (1, "merged"), (2, "conflict"), (3, "merge_red"), (1, "merged"), (2, "merged")]
    assert [(a["number"], a["slot"]) for a in data["attempts"]["list"]] == [
        (1, 1), (2, 2), (3, 3), (4, 1), (5, 2), (6, 3)]
    json.dumps(data)


def test_the_timeline_has_one_row_per_slot(tmp_path: Path) -> None:
    events = parallel_run(ended=True)
    events[-1:-1] = [start(222, 7, 1, "audit") | {"slot": None, "kind": "audit"},
                     end(225, 222, 7, 1, "audit") | {"slot": None}]  # one agent: no slot
    page = render_html(_report(tmp_path, events))
    rows = re.findall(r'<text x="42" y="([\d.]+)" class="tick" text-anchor="end">'
                      r"(one|slot \d+)<", page)
    assert [label for _, label in rows] == ["one", "slot 1", "slot 2", "slot 3"]
    # each attempt is drawn in its slot's row: 004 (slot 1) in the row of "slot 1"
    y_of = {label: float(y) for y, label in rows}
    mark = re.search(r'<rect x="[\d.]+" y="(\d+)" width="[\d.]+" height="20" fill="([^"]+)">'
                     r"<title>004 ", page)
    assert mark is not None
    assert float(mark[1]) + 14 == y_of["slot 1"]
    assert mark[2] == COLOURS["success"]
    assert "<h2>Lanes (--parallel)</h2>" in page
    assert "<td>conflict</td><td>src/app.py: content conflict</td>" in page


def test_one_agents_night_has_no_lane(tmp_path: Path) -> None:
    events = [{k: v for k, v in e.items() if k not in ("slot",)} for e in parallel_run(True)
              if e["event"] != "merge"]
    report = _report(tmp_path, events)
    assert report.parallel is None
    assert "Lanes" not in render_text(report)
    assert "parallel" not in report_json(report)
    assert all("slot" not in a for a in report_json(report)["attempts"]["list"])
    page = render_html(report)
    assert "slot 1" not in page
    assert "Lanes" not in page


def test_forged_merges_and_slots_are_bounded_and_escaped(tmp_path: Path) -> None:
    events = [run_start()]
    events += [merge(10, 1, 1, "<script>x</script>", "merged") | {"why": "\x1b[2J" * 300}]
    events += [merge(11, 2, 1, "f", result) for result in ("won", None, 3, ["merged"])]
    events += [merge(12, 3, slot, "g", "conflict")
               for slot in (0, -1, 10**30, "2", True, 65)]  # type: ignore[arg-type]
    events += [merge(13 + i / 1000, i, 1 + i % 4, "h", "merge_red")
               for i in range(MAX_MERGES + 500)]
    events += [start(20, 9, 10**30, "x"), end(21, 20, 9, 10**30, "x"), start(22, 10, 1, "y"),
               end(23, 22, 10, 1, "y")]
    report = _report(tmp_path, events)
    p = report.parallel
    assert p is not None
    assert p.merges == {"merged": 1, "nothing": 0, "conflict": 6, "merge_red": MAX_MERGES + 500}
    assert len(p.listed) == MAX_MERGES
    assert [lane.slot for lane in p.lanes] == [1, 2, 3, 4]
    page, text = render_html(report), render_text(report)
    assert "<script>" not in page
    assert "\x1b" not in page + text
    assert f"… {MAX_MERGES - 20} earlier merges (--json lists them)" in text


def test_a_parallel_night_matches_the_documented_schema(tmp_path: Path) -> None:
    from tests.integration.test_events_schema import check
    from tests.unit.reports.test_morning_schema import schema

    data = json.loads(json.dumps(report_json(_report(tmp_path, parallel_run(ended=True)))))
    assert check(data, schema(), "report") == []
    data["parallel"]["merges"]["won"] = 1
    assert check(data, schema(), "report") == ["report.parallel.merges: undocumented won"]


def test_a_recorded_parallel_run_conflict_then_solved(tmp_path: Path) -> None:
    """events.jsonl of a real `--parallel 2` run with the fake agent (the wiring's integration
    test of a conflict sent back and then solved): the views read what aidd wrote."""
    recorded = Path(__file__).parents[1] / "watch" / "data" / "parallel-run.jsonl"
    events = [json.loads(line) for line in recorded.read_text().splitlines()]
    paths = ProjectPaths(tmp_path / "shop")
    paths.features.mkdir(parents=True)
    paths.events.write_text(jsonl(events))
    report = build_report(paths, "24h", START.replace(hour=12), {})
    p = report.parallel
    assert p is not None
    assert p.merges == {"merged": 2, "nothing": 0, "conflict": 1, "merge_red": 0}
    assert [(lane.slot, lane.attempts, lane.merged, lane.sent_back, lane.features)
            for lane in p.lanes] == [(1, 2, 1, 1, ("f1",)), (2, 1, 1, 0, ("f2",))]
    assert [(a.number, a.slot) for a in report.attempts] == [(2, 2), (1, 1), (3, 1), (4, None)]
    assert ("## Lanes: 2 slots (--parallel); merges: 2 merged, 0 nothing, 1 conflict, "
            "0 merge_red\n") in render_text(report)
    assert "aidd/f1 does not merge in shared.txt" in render_html(report)


def test_a_stopped_runs_unmerged_branches_are_named_until_merged(tmp_path: Path) -> None:
    """The next start's `worktrees_cleaned` names them; a later merge of one (or its deletion
    once merged) takes it off; a name that is no `aidd/` branch is forged, left out."""
    cleaned = event(0.5, "worktrees_cleaned", removed=["/data/wt/cart"],
                    kept=["aidd/cart", "aidd/search", "main\x1b[2J", 7], deleted=[])
    events = [*parallel_run(ended=True)[:2], cleaned, *parallel_run(ended=True)[2:]]
    report = _report(tmp_path, events)
    assert report.parallel is not None
    assert report.parallel.kept == ("aidd/search",)  # aidd/cart was merged later in the window
    assert "kept unmerged (a stopped run's work): aidd/search\n" in render_text(report)
    assert report_json(report)["parallel"]["kept"] == ["aidd/search"]
    assert "kept unmerged (a stopped run's work): aidd/search</p>" in render_html(report)
    alone = _report(tmp_path / "b", [run_start(), event(1, "worktrees_cleaned", removed=[],
                                                        kept=["aidd/x"], deleted=[])])
    assert alone.parallel is not None
    assert alone.parallel.kept == ("aidd/x",)


def _gate(at: float, number: int, new: int, **tags: Any) -> dict[str, Any]:
    fields = {"name": "pytest", "ok": new == 0, "exit": int(new > 0), "duration_s": 3.0,
              "new_failures": new, "known_failures": 0, "new": ["t::x"] * new,
              "timed_out": False, "log": f".automaker/iterations/{number:03d}.gate.log"}
    return event(at, "gate", number=number) | fields | tags


def test_a_slot_s_red_worktree_gate_marks_its_attempt_not_the_project_s_gate(
        tmp_path: Path) -> None:
    """The gate in a slot's worktree (its events tagged `slot`) judged a branch: red, its
    attempt is marked red, but the project's gate row is the merged results' (untagged)."""
    events = parallel_run(ended=True)
    events.insert(-1, _gate(61, 1, 0))  # the merged result of 001, in the project: green
    events.insert(-1, _gate(221, 6, 2, slot=3, feature="search"))  # 006's worktree: red
    report = _report(tmp_path, events)
    (row,) = report.gate.commands
    assert (row.red, row.number) == (False, 1)
    assert report.gate.runs == 2
    assert [a.number for a in report.attempts if a.gate_red] == [6]
