"""A real terminal for the full-screen views' tests: a tmux server of the test's own (its
socket in tmp), 80x24: `send-keys` types, `capture-pane` reads the screen."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

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

    def colours(self) -> str:
        """The screen with its escape sequences (-e): colours and bold."""
        done = subprocess.run([*self.base, "capture-pane", "-p", "-e"], capture_output=True,
                              text=True, timeout=10)
        return done.stdout

    def wait(self, text: str, timeout: float) -> str:
        """The screen once it shows `text`."""
        wait_for(lambda: text in self.screen(), timeout, f"the screen to show {text!r}")
        return self.screen()

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, timeout=10)


@contextmanager
def tmux_in(tmp_path: Path) -> Iterator[Tmux]:
    """A tmux server of the test's own; .ci/run installs tmux and requires these tests to run."""
    if shutil.which("tmux") is None:
        if "tmux" in os.environ.get("AIDD_TEST_REQUIRE", "").split(","):
            pytest.fail("tmux is not installed: .ci/run installs Debian's tmux")
        pytest.skip("tmux is not installed (apt-get install -y tmux) to watch a run in")
    server = Tmux(tmp_path / "tmux.sock")
    try:
        yield server
    finally:
        server.close()
