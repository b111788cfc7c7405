"""events.jsonl (LOG-40..43): times from the injected clock, one line per event, torn lines."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from aidd import events, numbers
from aidd.events import EventLog, EventsRead, load_events, parse_event, read_events
from aidd.fsio import UnsafePathError
from tests.fakes.clock import FakeClock
from tests.planted import plant


def test_each_event_is_a_line_stamped_by_the_injected_clock_in_utc(tmp_path: Path) -> None:
    start = datetime(2026, 11, 22, 13, 0, 0, 250_000, tzinfo=timezone(timedelta(hours=1)))
    clock = FakeClock(start)
    log = EventLog(tmp_path / "events.jsonl", "run-1", clock=clock)
    log.emit("run_start", cli="opencode")
    clock.advance(1.5)
    log.emit("run_end", exit_code=0)
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    assert len(lines) == 2
    assert read_events(tmp_path / "events.jsonl") == [
        {"v": 1, "ts": "2026-11-22T12:00:00.250Z", "run": "run-1", "event": "run_start",
         "cli": "opencode"},
        {"v": 1, "ts": "2026-11-22T12:00:01.750Z", "run": "run-1", "event": "run_end",
         "exit_code": 0},
    ]  # fmt: skip


def test_a_torn_last_line_is_skipped_and_the_next_event_starts_a_fresh_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"v": 1, "event": "old"}\n{"v": 1, "ev')
    assert [e["event"] for e in read_events(path)] == ["old"]
    EventLog(path, "run-2", clock=FakeClock()).emit("run_start")
    assert [e["event"] for e in read_events(path)] == ["old", "run_start"]


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_a_planted_events_file_reads_as_no_events_without_blocking(tmp_path: Path,
                                                                   kind: str) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_text('{"event": "secret"}\n')
    automaker = tmp_path / "proj" / ".automaker"
    path = plant(automaker / "events.jsonl", kind, outside)
    assert read_events(path) == []  # a FIFO without a writer would block a plain read


def test_listeners_hear_each_record_before_its_line_and_one_that_fails_changes_nothing(
        tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    log = EventLog(path, "run-3", clock=FakeClock())
    heard: list[tuple[str, int]] = []

    def broken(record: dict[str, object]) -> None:
        raise RuntimeError("a notifier bug")

    log.listeners += [broken, lambda r: heard.append((str(r["event"]), len(read_events(path))))]
    log.emit("run_start", cli="opencode")
    log.emit("run_end", exit_code=0)
    assert heard == [("run_start", 0), ("run_end", 1)]
    assert [e["event"] for e in read_events(path)] == ["run_start", "run_end"]


def test_load_events_counts_what_it_skips_and_never_crashes(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    deep = b"[" * 100_000 + b"]" * 100_000
    path.write_bytes(b'{"event": "a"}\n\nnot json\n[1, 2]\n' + deep
                     + b'\n\xff\xfe\n{"event": "b"}\n')
    read = load_events(path)
    assert [e["event"] for e in read.events] == ["a", "b"]
    assert (read.skipped, read.error) == (4, None)  # the blank line is not counted


@pytest.mark.parametrize(("line", "event"), [
    ('{"event": "a"}', {"event": "a"}),
    ('  {"event": "a"}  \t', {"event": "a"}),
    (b'{"event": "a"}\r', {"event": "a"}),
    ('{"event": "a"} {"event": "b"}', None),
    ('{"event": "a"}x', None),
    ("[" * 100_000, None),
    (b"{" * 100_000, None),
    ("", None),
    ("[1]", None),
    ('{"event": ["iteration_start"], "slot": 1}', None),  # readers look a name up in a set
    ('{"event": {"a": 1}}', None),
    ('{"run": "r"}', {"run": "r"}),
])
def test_parse_event_is_one_object_per_line_or_none(line: str | bytes,
                                                      event: dict[str, str] | None) -> None:
    """The one parser of events.jsonl lines (issue 27 item 14): its fast path for aidd's own
    lines accepts what `json.loads` accepts, and a planted line is None, never an exception."""
    assert parse_event(line) == event


def test_load_events_says_why_a_file_was_not_read(tmp_path: Path) -> None:
    assert load_events(tmp_path / "missing.jsonl") == EventsRead([], 0, None)
    path = plant(tmp_path / "proj" / "events.jsonl", "fifo", tmp_path / "x")
    read = load_events(path)
    assert read.events == []
    assert read.error


def test_an_event_is_walked_for_nan_only_when_json_refuses_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: every event was walked for NaN and Infinity before `json` wrote it (40 % of an
    event); the walk runs for the event `json` refused, whose NaN is still null."""
    walked: list[object] = []
    monkeypatch.setattr(events, "json_safe",
                        lambda value: walked.append(value) or numbers.json_safe(value))
    path = tmp_path / "events.jsonl"
    log = EventLog(path, "run-1", clock=FakeClock())
    log.emit("iteration_end", cost_usd=1.5, tokens={"input": 1}, seconds=(1.5, 2))
    assert walked == []
    log.emit("iteration_end", cost_usd=float("nan"))
    assert len(walked) == 1
    first, second = read_events(path)
    assert (first["tokens"], first["seconds"], second["cost_usd"]) == ({"input": 1}, [1.5, 2],
                                                                        None)


def test_no_nan_or_infinity_is_ever_written(tmp_path: Path) -> None:
    """Before: a forged cost of NaN was written as a bare `NaN`, which is not JSON (issue 27)."""
    path = tmp_path / "events.jsonl"
    log = EventLog(path, "run-1", clock=FakeClock())
    log.emit("iteration_end", cost_usd=float("nan"), used=float("inf"),
             tokens={"input": float("-inf"), "output": 3}, seconds=[1.5, float("nan")])

    def refuse(word: str) -> None:
        raise AssertionError(f"events.jsonl holds {word}")

    (line,) = path.read_text().splitlines()
    event = json.loads(line, parse_constant=refuse)
    assert (event["cost_usd"], event["used"]) == (None, None)
    assert event["tokens"] == {"input": None, "output": 3}
    assert event["seconds"] == [1.5, None]


# -- the file kept open for the run (issue 33) --------------------------------------------------
@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "proj" / ".automaker").mkdir(parents=True)
    return tmp_path / "proj"


def _log(project: Path) -> EventLog:
    return EventLog(project / ".automaker" / "events.jsonl", "run-k", root=project,
                    clock=FakeClock())


def _names(path: Path) -> list[str]:
    return [e["event"] for e in read_events(path)]


def test_a_run_opens_its_events_file_once_and_readers_see_each_line_at_once(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[Path] = []
    real = events.open_file

    def spy(root: Path, path: Path, flags: int) -> int:
        opened.append(path)
        return real(root, path, flags)

    monkeypatch.setattr(events, "open_file", spy)
    log = _log(project)
    slot = log.tagged(slot=2)
    for n in range(5):
        (log if n % 2 else slot).emit(f"e{n}")
        assert _names(log.path) == [f"e{i}" for i in range(n + 1)]  # no buffering
    assert opened == [log.path]
    log.close()
    log.emit("after")  # an event after the close opens it again
    assert _names(log.path)[-1] == "after"
    assert len(opened) == 2


@pytest.mark.parametrize("how", ["deleted", "renamed", "replaced"])
def test_an_events_file_taken_away_mid_run_gets_a_fresh_one_at_its_path(
        project: Path, how: str) -> None:
    log = _log(project)
    log.emit("before")
    moved = project / "moved.jsonl"
    if how == "deleted":
        log.path.unlink()
    else:
        log.path.rename(moved)
        if how == "replaced":
            log.path.write_text('{"event": "planted"}\n')
    log.emit("after")
    assert _names(log.path) == (["planted", "after"] if how == "replaced" else ["after"])
    if how != "deleted":
        assert _names(moved) == ["before"]


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_a_link_planted_mid_run_is_refused_and_never_written_through(
        project: Path, tmp_path: Path, kind: str) -> None:
    log = _log(project)
    log.emit("before")
    outside = tmp_path / "outside.jsonl"
    if kind == "symlink":  # the file moved out, a link to it in its place
        log.path.rename(outside)
        plant(log.path, "symlink", outside)
    else:  # a second name for the file itself
        os.link(log.path, outside)
    with pytest.raises(UnsafePathError):
        log.emit("after")
    assert _names(outside) == ["before"]


def test_a_directory_swapped_for_a_link_to_the_moved_file_is_refused(
        project: Path, tmp_path: Path) -> None:
    """The path still leads to the very file aidd holds, through a planted link: a stat of the
    path would say "the same file" and aidd would write outside the project."""
    log = _log(project)
    log.emit("before")
    outside = tmp_path / "elsewhere"
    (project / ".automaker").rename(outside)
    plant(project / ".automaker", "symlink", outside)
    assert (project / ".automaker" / "events.jsonl").samefile(outside / "events.jsonl")
    with pytest.raises(UnsafePathError):
        log.emit("after")
    assert _names(outside / "events.jsonl") == ["before"]
