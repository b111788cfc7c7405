"""`aidd watch` against a real run with the fake agent, inside a real terminal (tmux): it
shows the run as it goes, and `s` then `y` ends the run with exit 6 (issue 30)."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.integration.runs import WIDE_LIMITS, console, started
from tests.tmux import Tmux, tmux_in
from tests.waiting import wait_for


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    with tmux_in(tmp_path) as server:
        yield server


def test_watch_follows_a_run_and_s_stops_it(
        env: dict[str, str], fake_agent: FakeAgent, project: Path, tmp_path: Path,
        tmux: Tmux) -> None:
    feature(project, description="d")
    feature(project, "feature-2-b", passes=True, status="completed")
    # The agent talks, calls a tool, then works until the stop request is there.
    fake_agent.script([{"init": True}, {"say": "WATCH-MARK hello"},
                       {"tool": {"name": "read", "input": {"path": "README.md"}}},
                       {"line": "AGENT-LINE \x1b]0;title\x07 visible"},
                       {"wait_file": ".automaker/.stop", "timeout": 60}, {"finish": True}])
    watch = shlex.join([sys.executable, "-m", "aidd", "watch", "--project-dir", str(project)])
    with started(env, tmp_path, "--project-dir", str(project), "--max-iterations", "3",
                 *WIDE_LIMITS) as run:
        wait_for(fake_agent.records, 20, "the agent to start")
        tmux.start(f"{watch}; sleep 30", {**env, "TERM": "xterm-256color"})
        screen = _wait_screen(tmux, "AGENT-LINE", 20)
        assert "iteration 1 of 3" in screen, screen
        assert "features 1/2" in screen, screen
        assert "running" in screen, screen
        assert "title" not in screen  # the agent's OSC sequence was cleaned away
        assert all(len(line) <= 80 for line in screen.splitlines())
        tmux.keys("s")
        _wait_screen(tmux, "y/n", 10)
        assert not (project / ".automaker" / ".stop").exists()
        tmux.keys("y")
        assert run.wait(timeout=30) == 6, console(tmp_path)
        screen = _wait_screen(tmux, "ended: stopped, exit 6", 10)
        assert "run_end reason=stopped exit_code=6" in screen, screen
        tmux.keys("q")
        wait_for(lambda: "aidd watch" not in tmux.screen(), 10, "the watch to quit")


def _wait_screen(tmux: Tmux, text: str, timeout: float) -> str:
    return tmux.wait(text, timeout)
