"""`aidd fleet watch`'s screen and keys, in-process, from progress records: the rows a real
fleet's server gave (3 projects with fake agents, data/rows.json) and hostile ones (control
characters, bidi overrides, huge and non-finite numbers, a directory that is no path)."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from temporalio.converter import DataConverter, value_to_type

from aidd.clock import SystemClock
from aidd.fleet import watching
from aidd.fleet.board import Board, frame, lines
from aidd.fleet.control import Known, Row, _heartbeat
from aidd.fleet.records import Progress, State
from aidd.watch.screen import columns
from aidd.watch.terminal import DOWN, UP
from tests.fakes.clock import FakeClock

DATA = Path(__file__).parent / "data"
UPDATE = False  # True once to write the snapshot again after a deliberate change
TITLE = "3 projects · server 127.0.0.1:23505 · updated 10:08:42"
HERE = {"AIDD_FLEET_HOST": "vm"}  # the recorded rows ran on a machine named vm


def _recorded() -> tuple[Row, ...]:
    return tuple(value_to_type(Row, raw) for raw in json.loads((DATA / "rows.json").read_text()))


def _hostile() -> tuple[Row, ...]:
    evil = Progress(iteration=10**40, result=-3, cost_usd=math.nan, features_passing=2,
                    features_total=1 << 70, host="h\x1b[2J\u202eost", attempt=True,  # type: ignore[arg-type]
                    root="/tmp/\x00evil\x1b]52;c;eA==\x07", last_event="x\r\nforged",
                    run_id="\x9b31m" * 50, tokens=-1)
    return (Row("lab", "\x1b]0;owned\x07" + "n" * 500, State.RUNNING, evil, exit_code=2**70,
                message="line\nbreak\x1b[31m"),
            Row("other\x1b[H", "p", State.FAILED, Progress(cost_usd=math.inf, root=7)),  # type: ignore[arg-type]
            Row("lab", "项目" * 40 + "🚀", State.DONE, Progress(host="主机" * 10, root="/项目")))


def test_the_recorded_fleet_as_the_snapshot_shows_it() -> None:
    got = "\n".join(lines(Board(_recorded(), 0, TITLE, here=True), 80, 24)) + "\n"
    snapshot = DATA / "rows.screen.txt"
    if UPDATE:
        snapshot.write_text(got)
    assert got == snapshot.read_text()


@pytest.mark.parametrize(("width", "height"), [(80, 24), (40, 10), (200, 60), (1, 1), (80, 5)])
def test_the_screen_fits_any_size(width: int, height: int) -> None:
    for rows in (_recorded(), _hostile(), ()):
        for selected in (0, 1, 5):
            got = lines(Board(rows, selected, TITLE, here=False), width, height)
            assert len(got) <= height
            assert all(columns(line) <= width for line in got)  # wide characters: 2 columns


def test_hostile_values_are_shown_inert() -> None:
    for selected in (0, 1, 2):
        got = lines(Board(_hostile(), selected, TITLE, here=False, message="\x1b[2Jm"), 200, 24)
        text = "\n".join(got)
        assert not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or 0x202a <= ord(c) <= 0x202e
                       for line in got for c in line), text
    row = next(line for line in got if "owned" in line)
    assert "\\x1b]0;owned\\x07nnn" in row
    assert "running" in row
    assert "$" not in row.split("running")[1].split()[3]  # NaN dollars: "?", never "$nan"
    assert " ? " in row
    assert "exit" not in row  # an exit code of 2**70 is none at all
    first = "\n".join(lines(Board(_hostile(), 0, TITLE, here=False), 200, 24))
    assert "on h\\x1b[2J\\u202eost: /tmp/\\x00evil\\x1b]52;c;eA==\\x07" in first
    assert "line\\nbreak\\x1b[31m" in first  # the message, one line
    assert "other\\x1b[H/p" in text  # two fleets: fleet/project


def test_many_projects_scroll_with_the_selection() -> None:
    rows = tuple(Row("lab", f"p{i:02d}", State.QUEUED) for i in range(40))
    got = lines(Board(rows, 33, TITLE, here=False), 80, 24)
    assert any(line.startswith("> p33 ") for line in got)
    assert sum(line.startswith(("> p", "  p")) for line in got) == 24 - 7
    painted = frame(Board(rows, 33, TITLE, here=False), 80, 24, color=True)
    assert "\x1b[7m> p33 " in painted  # the selected row reversed
    assert "\x1b[7m" not in frame(Board(rows, 33, TITLE, here=False), 80, 24, color=False)


def test_the_selection_follows_its_project_and_a_failed_query_keeps_the_rows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _recorded()
    answers: list[Any] = [rows, RuntimeError("connection refused\nmore"), rows[::-1]]

    async def status(_client: object, _fleet: str | None, _known: object) -> list[Row]:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return list(answer)

    monkeypatch.setattr(watching, "fleet_status", status)
    fleet, clock = watching.Fleet("127.0.0.1:1", None), SystemClock()
    with asyncio.Runner() as runner:
        fleet.refresh(None, runner.run, clock)  # type: ignore[arg-type]
        watching.press(fleet, "j", HERE, clock, color=False)
        assert fleet.rows[fleet.selected].project == "bravo"
        fleet.refresh(None, runner.run, clock)  # type: ignore[arg-type]
        assert fleet.rows == rows
        assert fleet.message == "the server could not be asked (connection refused); asking again"
        fleet.refresh(None, runner.run, clock)  # type: ignore[arg-type]
    assert fleet.rows[fleet.selected].project == "bravo"
    assert fleet.message == ""


def test_keys_move_within_the_rows_and_q_quits() -> None:
    fleet = watching.Fleet("s", None, rows=_recorded())
    for key, at in ((UP, 0), (DOWN, 1), ("j", 2), ("j", 2), ("k", 1), (UP, 0)):
        watching.press(fleet, key, HERE, SystemClock(), color=False)
        assert fleet.selected == at
    watching.press(fleet, "q", HERE, SystemClock(), color=False)
    assert fleet.done


def test_enter_opens_a_project_here_and_says_why_not_elsewhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".automaker").mkdir()
    opened: list[Path] = []
    monkeypatch.setattr(watching, "follow", lambda source, *_: opened.append(source.paths.root))
    row = replace(_recorded()[1], progress=replace(_recorded()[1].progress, root=str(tmp_path)))
    fleet = watching.Fleet("s", None, rows=(row,))
    assert watching.press(fleet, "\n", HERE, SystemClock(), color=False)
    assert opened == [tmp_path]
    assert not watching.press(fleet, "\r", {"AIDD_FLEET_HOST": "elsewhere"}, SystemClock(),
                              color=False)
    assert fleet.message == "bravo runs on vm, not on this machine (elsewhere)"
    assert opened == [tmp_path]


@pytest.mark.parametrize("root", ["", "relative/dir", "/no/such/dir", "/tmp/\x00nul", 7,
                                  "/" + "a" * 5000])
def test_a_directory_the_server_names_opens_only_when_it_is_a_project_here(root: Any) -> None:
    row = Row("lab", "p", State.RUNNING, Progress(host="vm", root=root))
    assert watching.local_root(row, HERE) is None


def test_a_repeated_heartbeat_is_decoded_once() -> None:
    """`aidd fleet watch` asks every 2 s: a waiting project's heartbeat, unchanged, is not
    decoded again (control.Known); a changed one is."""
    decoded: list[object] = []

    class Converter:
        async def decode(self, payloads: Any, types: Any) -> list[Any]:
            decoded.append(payloads)
            return await DataConverter.default.decode(payloads, types)

    client: Any = type("Client", (), {"data_converter": Converter()})()

    async def beat(progress: Progress, known: Known) -> Progress:
        payloads = await DataConverter.default.encode([progress])
        now = Known()
        got = await _heartbeat(client, "aidd-fleet/lab/p", payloads, (known, now))
        known.heartbeats = now.heartbeats
        return got

    async def main() -> None:
        known = Known()
        first = await beat(Progress(iteration=3, host="vm"), known)
        assert first == Progress(iteration=3, host="vm")
        assert await beat(Progress(iteration=3, host="vm"), known) is first
        assert len(decoded) == 1
        assert (await beat(Progress(iteration=4, host="vm"), known)).iteration == 4
        assert len(decoded) == 2

    asyncio.run(main())


def test_one_query_every_2_s_keys_waited_on_and_a_frame_only_when_it_changed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """60 s of an idle fleet on a fake clock: 30 queries, never a busy loop (every wait for a
    key is a real wait), and a frame written only when the screen changed."""
    clock = FakeClock()
    waits: list[float] = []
    frames: list[str] = []
    asked: list[float] = []

    def keys(timeout: float) -> list[str] | None:
        waits.append(timeout)
        clock.advance(timeout)
        return ["q"] if clock.monotonic() >= 1060.0 else []

    async def status(*_: object) -> list[Row]:
        asked.append(clock.monotonic())
        return list(_recorded())  # the same rows each time

    monkeypatch.setattr(watching, "read_keys", keys)
    monkeypatch.setattr(watching, "screen", frames.append)
    monkeypatch.setattr(watching, "fleet_status", status)
    fleet = watching.Fleet("s", None)
    with asyncio.Runner() as runner:
        watching.watch(fleet, None, runner.run, clock, False, HERE)  # type: ignore[arg-type]
    assert len(asked) == 30
    assert all(b - a == pytest.approx(2.0) for a, b in itertools.pairwise(asked))
    assert min(waits) > 0.2  # the tick: 0.25 s
    assert len(frames) == 30  # the title's time changes once a query, nothing else does
    assert fleet.done
