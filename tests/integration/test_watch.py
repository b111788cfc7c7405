"""`aidd watch` against a real run with the fake agent, inside a real terminal (tmux): it
shows the run as it goes, and `s` then `y` ends the run with exit 6 (issue 30)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.integration.runs import WIDE_LIMITS, console, started
from tests.waiting import wait_for


class Tmux:
    """One detached tmux server of the test's own (its socket in tmp), 80x24."""

    def __init__(self, socket: Path) -> None:
        self.base = ["tmux", "-S", str(socket)]

    def start(self, command: str, env: dict[str, str]) -> None:
        subprocess.run([*self.base, "new-session", "-d", "-x", "80", "-y", "24", command],
                       env=env, check=True, timeout=10)

    def keys(self, *keys: str) -> None:
        subprocess.run([*self.base, "send-keys", *keys], check=True, timeout=10)

    def screen(self) -> str:
        done = subprocess.run([*self.base, "capture-pane", "-p"], capture_output=True,
                              text=True, timeout=10)
        return done.stdout

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, timeout=10)


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    """A tmux server of the test's own; .ci/run installs tmux and requires this test to run."""
    if shutil.which("tmux") is None:
        if "tmux" in os.environ.get("AIDD_TEST_REQUIRE", "").split(","):
            pytest.fail("tmux is not installed: .ci/run installs Debian's tmux")
        pytest.skip("tmux is not installed (apt-get install -y tmux) to watch a run in")
    server = Tmux(tmp_path / "tmux.sock")
    try:
        yield server
    finally:
        server.close()


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
    """The screen once it shows `text`."""
    wait_for(lambda: text in tmux.screen(), timeout, f"the screen to show {text!r}")
    return tmux.screen()
