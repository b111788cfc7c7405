"""`aidd fleet watch` against the local server with 3 projects run by fake agents, inside a real
terminal (tmux): every project's row, the selection moved by j and the arrows, `Enter` opening a
running project's `aidd watch` and `q` coming back to the fleet (issue 30)."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fleet.lab import Lab, working
from tests.tmux import Tmux, tmux_in
from tests.waiting import wait_for

pytest.importorskip("temporalio", reason="the fleet extra is not installed")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    with tmux_in(tmp_path) as server:
        yield server


def _row(screen: str, name: str) -> str:
    return next(line for line in screen.splitlines() if line[2:].startswith(name + " "))


def _cells(row: str) -> list[str]:
    """State, attempt and iteration (the host between them is this machine's name)."""
    words = row[2:].split()
    return [words[1], *words[3:5]]


def test_fleet_watch_shows_three_projects_and_enter_opens_one(lab: Lab, tmux: Tmux) -> None:
    long = ["--max-iterations", "1"]
    projects = {"alpha": lab.project("alpha", working(0), args=long),
                "bravo": lab.project("bravo", [{"say": "BRAVO-MARK"}, *working(90)], args=long),
                "charlie": lab.project("charlie", working(90), args=long)}
    up = lab.start("up", str(lab.fleet_file(projects)))
    wait_for(lambda: lab.mark("bravo", "start") and lab.mark("charlie", "start"), 90,
             "two agents at work")
    plain = lab.run("watch")  # not a terminal: one frame, every project
    assert plain.code == 0, plain.err
    assert [line[2:].split()[0] for line in plain.out.splitlines()[2:5]] == [
        "alpha", "bravo", "charlie"], plain.out
    assert "\x1b" not in plain.out
    command = shlex.join([sys.executable, "-m", "aidd", "fleet", "watch"])
    tmux.start(f"{command}; sleep 60", {**lab.env, "TERM": "xterm-256color"})
    screen = tmux.wait("alpha ", 30)
    wait_for(lambda: "done" in _row(tmux.screen(), "alpha"), 30, "alpha done on the screen")
    screen = tmux.screen()
    assert "3 projects" in screen, screen
    assert all(len(line) <= 80 for line in screen.splitlines())
    alpha = _row(screen, "alpha")
    assert alpha.startswith("> ")  # the first is selected
    assert alpha.endswith("$0.25  0 success · exit 0"), alpha
    for name in ("bravo", "charlie"):  # iteration 1 from their heartbeats
        wait_for(lambda n=name: _cells(_row(tmux.screen(), n)) == ["running", "1", "1"], 20,
                 f"{name} running its iteration 1")
    assert "Enter: its aidd watch" in screen, screen  # alpha ran here, in its directory
    tmux.keys("j")
    wait_for(lambda: _row(tmux.screen(), "bravo").startswith("> "), 10, "bravo selected")
    tmux.keys("Down")
    wait_for(lambda: _row(tmux.screen(), "charlie").startswith("> "), 10, "charlie selected")
    tmux.keys("Up")
    wait_for(lambda: _row(tmux.screen(), "bravo").startswith("> "), 10, "bravo again")
    tmux.keys("Enter")
    tmux.wait("aidd watch · running", 20)
    tmux.wait("BRAVO-MARK", 20)  # bravo's agent's line: bravo's view
    tmux.keys("q")  # back to the fleet, not out
    screen = tmux.wait("aidd fleet watch", 20)
    assert _row(screen, "bravo").startswith("> "), screen
    tmux.keys("q")
    wait_for(lambda: "aidd fleet watch" not in tmux.screen(), 10, "the fleet watch to quit")
    assert lab.run("stop", "--now").code == 0
    assert up.wait(60) == 6, lab.output()
