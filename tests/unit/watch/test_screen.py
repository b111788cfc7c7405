"""`aidd watch`'s screen from recorded events.jsonl files, in-process: a real run's, and a
hostile one (control characters, a huge line, forged events, a log path out of the project)."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from aidd.console import shown
from aidd.project.paths import ProjectPaths
from aidd.watch.follow import LINE_LIMIT, EventsFollower
from aidd.watch.model import Features, Tracker, View
from aidd.watch.screen import columns, cut, lines
from aidd.watch.source import Source

DATA = Path(__file__).parent / "data"
NOW = datetime(2026, 11, 27, 8, 36, 30, tzinfo=UTC)
UPDATE = False  # True once to write a snapshot again after a deliberate change


def _project(tmp_path: Path, events: str | bytes) -> ProjectPaths:
    paths = ProjectPaths(tmp_path / "proj")
    paths.iterations.mkdir(parents=True)
    data = events.encode() if isinstance(events, str) else events
    paths.events.write_bytes(data)
    return paths


def _screen(view: View, width: int = 80, height: int = 24) -> str:
    return "\n".join(lines(view, width, height)) + "\n"


def test_a_recorded_run_as_the_snapshot_shows_it(tmp_path: Path) -> None:
    paths = _project(tmp_path, (DATA / "run.jsonl").read_text())
    (paths.iterations / "002.log").write_text("\x1b[1mbold\x1b[0m output\n"
                                             '{"type": "text", "part": {}}\n» assistant: broken\n')
    source = Source(paths)
    features = Features(total=3, by_state=(("active", 1), ("done", 1), ("open", 1)),
                        working="feature-3-c: the third")
    view = source.view(NOW, 0.0)
    got = _screen(View(view.tracker, NOW, features, view.output, 12.0, running=False))
    snapshot = DATA / "run.screen.txt"
    if UPDATE:
        snapshot.write_text(got)
    assert got == snapshot.read_text()


def test_the_screen_fits_80x24_and_any_width(tmp_path: Path) -> None:
    paths = _project(tmp_path, (DATA / "run.jsonl").read_text())
    view = Source(paths).view(NOW, 0.0)
    for width, height in ((80, 24), (40, 10), (200, 60), (1, 1)):
        rows = lines(view, width, height)
        assert len(rows) <= height
        assert all(len(row) <= width for row in rows)


def _hostile(outside: Path) -> bytes:
    run = {"v": 1, "ts": "2026-11-27T08:00:00.000Z", "run": "r-\x1b]52;c;cGF3bmVk\x07"}
    events = [
        {**run, "event": "run_end", "exit_code": 0, "reason": "before any start"},
        {**run, "event": "run_start", "cli": "open\x1b[2Jcode", "host": "h\u009b31m",
         "project_dir": "/p\r\nFAKE LINE", "models": "not a dict",
         "limits": {"max_iterations": -3, "max_cost_usd": 1e308, "max_tokens": "lots"}},
        {**run, "event": "iteration_start", "number": "seven", "index": 2.5,
         "of": [1], "phase": {"x": 1}, "kind": "\u202egnidoc", "log": str(outside)},
        {**run, "event": "liveness", "state": "\x07hung", "why": "x" * 5000},
        {**run, "event": "nudge"}, {**run, "event": "nudge"},
        {**run, "event": "iteration_end", "tokens": {"input": -5, "output": 1e300},
         "cost_usd": "9.99"},
        {**run, "event": "iteration_end", "tokens": "many", "cost_usd": 0.25},
        {**run, "event": "gate", "name": "\x1b[31mred", "ok": "yes", "new_failures": 1e9},
        {**run, "event": "rate_limit_sleep", "until": "tomorrow", "ts": "not a time"},
        {**run, "event": "warning", "message": "\x1b]0;title\x07" + "m" * 3000},
        {**run, "event": 17}, {**run, "ts": 5},
    ]
    text = b"\n".join(json.dumps(e).encode() for e in events)
    huge = b'{"event": "run_end", "pad": "' + b"y" * (LINE_LIMIT * 3) + b'"}'
    deep = b"[" * 100_000
    tail = json.dumps({**run, "event": "kill", "reason": "after the huge line"}).encode()
    return b"\n".join([text, huge, deep, b"\xff\xfe not utf-8", tail, b'{"torn": '])


def test_a_hostile_file_never_crashes_and_shows_nothing_a_terminal_acts_on(
        tmp_path: Path) -> None:
    outside = tmp_path / "outside.log"
    outside.write_text("SECRET outside the project\n")
    paths = _project(tmp_path, _hostile(outside))
    source = Source(paths)
    view = source.view(NOW, 0.0)
    for width, height in ((80, 24), (30, 12)):
        rows = lines(view, width, height)
        assert all(shown(row, one_line=True) == row for row in rows), rows
        assert all(len(row) <= width for row in rows)
    text = _screen(view, 200, 60)
    assert "SECRET" not in text  # the forged log path leads out: not read
    assert view.tracker.ended is None  # the huge line (a forged run_end) was dropped
    assert "after the huge line" in text  # and the events after it still count
    assert view.tracker.attempt.nudges == 2
    assert view.tracker.cost_usd == pytest.approx(0.25)
    assert view.tracker.tokens == 0
    assert view.tracker.budgets == {}  # 1e308 dollars is no budget (numbers.quantity)


def test_events_are_read_once_and_followed_as_they_come(tmp_path: Path) -> None:
    source = DATA / "run.jsonl"
    first, second = source.read_bytes().split(b"\n", 5)[:5], source.read_bytes().split(b"\n")[5:]
    paths = _project(tmp_path, b"\n".join(first) + b"\n")
    follower = EventsFollower(paths.root, paths.events)
    assert len(follower.poll()) == 5
    assert follower.poll() == []
    rest = b"\n".join(second)
    with paths.events.open("ab") as file:
        file.write(rest[:50])  # a line half written: not an event yet
        file.flush()
        assert follower.poll() == []
        file.write(rest[50:])
    assert [e["event"] for e in follower.poll()][-1] == "run_end"
    shutil.copy(source, tmp_path / "again.jsonl")
    (tmp_path / "again.jsonl").replace(paths.events)  # a new file: read from its start, once
    assert len(follower.poll()) == len(source.read_text().splitlines())


def test_a_run_start_begins_a_new_run() -> None:
    tracker = Tracker()
    for run in ("a", "b"):
        tracker.feed({"event": "run_start", "run": run, "cli": run})
        tracker.feed({"event": "iteration_end", "run": run, "cost_usd": 1.0})
    assert (tracker.run_id, tracker.cli, tracker.cost_usd, tracker.attempts) == ("b", "b", 1.0, 1)


def test_a_huge_line_arriving_in_pieces_is_dropped_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("aidd.watch.follow.CHUNK", 64 << 10)
    start = b'{"event": "run_start", "run": "r"}\n'
    huge = b'{"event": "run_end", "run": "r", "pad": "' + b"y" * (LINE_LIMIT * 2) + b'"}\n'
    after = b'{"event": "kill", "run": "r"}\n'
    paths = _project(tmp_path, start + huge + after)
    follower = EventsFollower(paths.root, paths.events)
    seen = [e["event"] for _ in range(60) for e in follower.poll()]
    assert seen == ["run_start", "kill"]


def test_a_pause_liveness_nudges_and_the_gate_show_while_the_run_goes(tmp_path: Path) -> None:
    run = {"v": 1, "run": "r", "ts": "2026-11-27T08:30:00.000Z"}
    events = [
        {**run, "event": "run_start", "cli": "claude-code", "limits": {"max_iterations": 9}},
        {**run, "event": "iteration_start", "number": 4, "index": 3, "phase": "main",
         "kind": "coding", "log": ".automaker/iterations/004.log"},
        {**run, "event": "nudge"}, {**run, "event": "nudge"},
        {**run, "event": "liveness", "state": "hung", "why": "no CPU, no files"},
        {**run, "event": "gate", "name": "pytest", "ok": False, "new_failures": 2},
        {**run, "event": "rate_limit_sleep", "until": "2026-11-27T08:38:00.000Z"},
    ]
    paths = _project(tmp_path, "".join(json.dumps(e) + "\n" for e in events))
    view = Source(paths).view(NOW, 0.0)
    text = _screen(View(view.tracker, NOW, view.features, (), 42.0, running=True))
    assert "aidd watch · running" in text
    assert "iteration 3 of 9 (log 004) · main · coding" in text
    assert "hung · last output 42s ago · nudges 2 · no CPU, no files" in text
    assert "paused (rate limit): 1m30s left" in text
    assert "gate: pytest: 2 new failure(s)" in text


def test_a_log_path_no_file_can_have_is_no_crash(tmp_path: Path) -> None:
    """A NUL in a forged event's log path made os.open raise ValueError, not OSError."""
    start = {"event": "run_start", "run": "r"}
    forged = {"event": "iteration_start", "run": "r", "number": 1, "log": "iterations/\u0000.log"}
    paths = _project(tmp_path, f"{json.dumps(start)}\n{json.dumps(forged)}\n")
    view = Source(paths).view(NOW, 0.0)
    assert view.output == ()
    assert view.quiet_s is None


def test_a_cost_nobody_knows_is_unknown_never_zero() -> None:
    """As the morning report says it (issue 28): unknown, or at least the known sum."""
    from aidd.watch.model import Tracker
    from aidd.watch.screen import _cost

    tracker = Tracker()
    tracker.feed({"event": "run_start", "run": "r"})
    tracker.feed({"event": "iteration_end", "run": "r", "cost_usd": None})
    assert _cost(tracker) == "unknown"
    tracker.feed({"event": "iteration_end", "run": "r", "cost_usd": 0.5})
    assert _cost(tracker) == "≥ $0.50, some unknown"


def test_a_line_is_cut_by_the_columns_it_takes() -> None:
    """A wide character (CJK, emoji) takes two columns, a combining one none: a project named in
    them is cut to the width and cannot wrap a line of the screen."""
    assert cut("项目名称", 8) == "项目名称"
    assert cut("项目名称", 7) == "项目名…"
    assert columns(cut("项目名称" * 30, 80)) <= 80
    assert cut("e\u0301" * 10, 10) == "e\u0301" * 10  # é as e + a combining accent: 10 columns
    assert cut("🚀🚀x", 4) == "🚀…"
    assert cut("plain", 3) == "pl…"


def test_quiet_seconds_are_cut_as_the_elapsed_time_is(tmp_path: Path) -> None:
    """4.6 s of silence 4.6 s into the run read "elapsed 0m04s" beside "last output 5s ago"."""
    run = {"run": "r", "ts": NOW.isoformat()}
    events = [{**run, "event": "run_start"},
              {**run, "event": "iteration_start", "number": 1, "index": 1, "phase": "main",
               "kind": "coding"}]
    paths = _project(tmp_path, "".join(json.dumps(e) + "\n" for e in events))
    view = Source(paths).view(NOW, 0.0)
    later = NOW + timedelta(seconds=4.6)
    text = _screen(View(view.tracker, later, view.features, (), 4.6, running=True))
    assert "elapsed 0m04s" in text
    assert "last output 4s ago" in text
