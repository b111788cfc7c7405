"""`aidd watch` of a `--parallel N` run: one lane per slot, from synthesised events.jsonl files
whose slots' attempts overlap; forged slot values change no lane and cannot grow the view."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

from aidd.events import MAX_SLOTS
from aidd.project.paths import ProjectPaths
from aidd.watch.model import Features, Tracker, View
from aidd.watch.screen import lines
from aidd.watch.source import Source
from tests.unit.parallelrun import START, event, jsonl, parallel_run, run_start, start

DATA = Path(__file__).parent / "data"
NOW = START + timedelta(seconds=130)
UPDATE = False  # True once to write the snapshot again after a deliberate change


def _source(tmp_path: Path, events: list[dict[str, Any]]) -> Source:
    paths = ProjectPaths(tmp_path / "proj")
    paths.iterations.mkdir(parents=True)
    paths.events.write_text(jsonl(events))
    for number in (4, 5, 6):  # each lane's log, last written 12, 30 and 3 s before NOW
        log = paths.iterations / f"{number:03d}.log"
        log.write_text(f"» assistant: working in attempt {number}\n")
        mtime = (NOW - timedelta(seconds={4: 12, 5: 30, 6: 3}[number])).timestamp()
        os.utime(log, (mtime, mtime))
    return Source(paths)


def _view(source: Source) -> View:
    view = source.view(NOW, 0.0)
    return View(view.tracker, NOW, Features(total=6, by_state=(("done", 1), ("open", 5))),
                view.output, view.quiet_s, True, "", view.lane_quiet)


def test_three_slots_as_the_snapshot_shows_them(tmp_path: Path) -> None:
    got = "\n".join(lines(_view(_source(tmp_path, parallel_run())), 80, 24)) + "\n"
    snapshot = DATA / "parallel.screen.txt"
    if UPDATE:
        snapshot.write_text(got)
    assert got == snapshot.read_text()


def test_each_slot_keeps_its_own_attempt_liveness_and_nudges(tmp_path: Path) -> None:
    view = _view(_source(tmp_path, parallel_run()))
    lanes = view.tracker.lanes
    assert sorted(lanes) == [1, 2, 3]
    assert [(lanes[s].number, lanes[s].feature) for s in (1, 2, 3)] == [
        (4, "checkout"), (5, "cart"), (6, "search")]
    assert (lanes[1].nudges, lanes[2].nudges, lanes[2].liveness) == (1, 0, "waiting")
    assert view.lane_quiet == {1: 12.0, 2: 30.0, 3: 3.0}
    assert view.tracker.attempt is lanes[3]  # the latest started: its log is the tail shown
    assert view.output == ("» assistant: working in attempt 6",)


def test_a_finished_lane_says_how_its_merge_went(tmp_path: Path) -> None:
    events = parallel_run()[:12]  # up to 002's end and its merge's conflict
    rows = lines(_view(_source(tmp_path, events)), 80, 24)
    assert any(r.startswith("slot 1 · login · log 001 · coding · finished, merged") for r in rows)
    assert any(r.startswith("slot 2 · cart · log 002 · coding · finished, conflict") for r in rows)
    assert any("merge slot=2 feature=cart number=2 reason=conflict result=conflict" in r
               for r in rows)


def test_four_lanes_fit_80x24_and_more_are_counted(tmp_path: Path) -> None:
    events = [run_start(), *(start(i, i, i, f"feature-{i}") for i in range(1, 13))]
    view = _view(_source(tmp_path, events))
    four = Tracker()
    for e in events[:5]:
        four.feed(e)
    rows = lines(View(four, NOW, Features(), (), None, True), 80, 24)
    assert [r for r in rows if r.startswith("slot ")] == [
        f"slot {i} · feature-{i} · log {i:03d} · coding · active ? quiet · nudges 0"
        for i in range(1, 5)]
    rows = lines(view, 80, 24)
    assert len(rows) <= 24
    assert all(len(r) <= 80 for r in rows)
    assert sum(r.startswith("slot ") for r in rows) == 7
    assert "… 5 more lanes (slots 8-12)" in rows


def test_forged_slots_change_no_lane_and_keep_the_view_bounded(tmp_path: Path) -> None:
    forged: list[dict[str, Any]] = [run_start()]
    for value in (0, -1, 10**30, "1", True, 1.0, None, [1], {"a": 1}, MAX_SLOTS + 1):
        forged.append(start(1, 1, 1, "x") | {"slot": value})
        forged.append(event(2, "nudge", number=1, slot=value))
    forged += [start(3, 2, 1, "real\x1b[2Jfeature"), event(4, "nudge", number=2, slot="1"),
               event(5, "liveness", number=2, state="hung", slot=-1)]
    forged += [start(6, 3 + i, 1 + i % (MAX_SLOTS * 2), "f" * 5000) for i in range(10_000)]
    source = _source(tmp_path, forged)
    view = _view(source)
    t = view.tracker
    assert len(t.lanes) == MAX_SLOTS
    assert max(t.lanes) == MAX_SLOTS
    assert len(view.lane_quiet) <= 16  # logs looked at per frame, however many lanes
    for width, height in ((80, 24), (20, 5), (300, 200)):
        rows = lines(view, width, height)
        assert len(rows) <= height
        assert all(len(r) <= width for r in rows)
    fresh = Tracker()
    for e in forged[:len(forged) - 10_000]:
        fresh.feed(e)
    assert list(fresh.lanes) == [1]
    assert (fresh.lanes[1].nudges, fresh.lanes[1].liveness) == (0, "")
    assert "\x1b" not in "".join(lines(View(fresh, NOW, Features(), (), None, True), 80, 24))


def test_a_run_without_slots_shows_no_lane_and_its_lines_as_before() -> None:
    tracker = Tracker()
    one = [{k: v for k, v in e.items() if k != "slot"} for e in parallel_run()[:12]]
    for e in one:
        tracker.feed(e)
    rows = lines(View(tracker, NOW, Features(), (), None, True), 80, 24)
    assert tracker.lanes == {}
    assert "── agent output " + "─" * 64 in rows
    assert not any(r.startswith("slot ") or "slot=" in r or "feature=" in r for r in rows)
    assert json.dumps(one).count('"slot"') == 0


def test_a_digit_shows_that_slots_output_and_0_the_latest(tmp_path: Path) -> None:
    from aidd.watch.terminal import Keys
    from tests.fakes.clock import FakeClock

    source = _source(tmp_path, parallel_run())
    keys = Keys(source, FakeClock(NOW), {})
    keys.press("1")
    rows = lines(source.view(NOW, 0.0, keys.message), 80, 24)
    assert rows[rows.index("  » assistant: working in attempt 4") - 1].startswith(
        "── agent output: slot 1, log 004 ──")
    assert rows[-1] == "the output of slot 1"
    keys.press("9")  # no such slot: the latest
    assert "  » assistant: working in attempt 6" in lines(source.view(NOW, 0.0), 80, 24)
    keys.press("0")
    assert source.followed is None


def test_a_merge_reads_the_feature_files_again(tmp_path: Path) -> None:
    """The queue carries a slot's feature file back with its merge: the counts follow at once,
    not at the next 30 s look."""
    from tests.featurefiles import feat, write

    events = parallel_run()
    source = _source(tmp_path, events[:8])  # up to 001's end (slot 1)
    write(source.paths, "login", feat("login", passes=False, status="in_progress"))
    assert source.view(NOW, 0.0).features.done == 0
    write(source.paths, "login", feat("login", passes=True, status="verified"))
    with source.paths.events.open("a") as file:
        file.write(jsonl(events[8:9]))  # its merge alone
    assert source.view(NOW, 1.0).features.done == 1


def test_an_event_name_that_is_no_string_is_no_crash(tmp_path: Path) -> None:
    """`Source` looks each name up in a set: a planted list raised TypeError there."""
    source = _source(tmp_path, [event(0, "x") | {"event": ["merge"], "slot": 1}, run_start(),
                                start(2, 1, 1, "a")])
    assert list(source.view(NOW, 0.0).tracker.lanes) == [1]


def test_an_attempt_of_no_slot_after_the_lanes_shows_as_one_agent(tmp_path: Path) -> None:
    audit = start(150, 7, 1, "") | {"kind": "audit"}
    del audit["slot"]
    events = [*parallel_run(ended=True)[:-1], audit]
    view = _view(_source(tmp_path, events))
    rows = lines(View(view.tracker, NOW, Features(), (), 4.0, True), 80, 24)
    assert rows[3] == "one agent · - · log 007 · audit · active 4s quiet · nudges 0"
    assert rows[4].startswith("slot 1 · checkout · log 004 · coding · finished, merged")
    assert "── agent output " + "─" * 64 in rows  # its output, as one agent's


def test_a_recorded_parallel_run_shows_its_two_lanes_merged(tmp_path: Path) -> None:
    """The events.jsonl of a real `--parallel 2` run (a conflict sent back, then solved)."""
    tracker = Tracker()
    for line in (DATA / "parallel-run.jsonl").read_text().splitlines():
        tracker.feed(json.loads(line))
    rows = lines(View(tracker, NOW, Features(), (), None, False), 80, 24)
    assert rows[2:5] == ["iteration 4 of ∞ · 2 lanes, 0 working",
                         "slot 1 · f1 · log 003 · coding · finished, merged",
                         "slot 2 · f2 · log 002 · coding · finished, merged"]
    assert tracker.exit_code == 73
