"""Colour on a terminal, never where NO_COLOR or --color never says no, always with --color
always (issue 28 item 9): the `aidd: error:` line in red, the run's warnings in yellow."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from aidd.config import color_wanted
from aidd.console import Console
from tests.integration.runs import REPO

RED = b"\x1b[31m"


def _on_a_terminal(env: dict[str, str], *args: str) -> bytes:
    """aidd's stderr and stdout on a pty, as a person at a terminal sees them."""
    parent, child = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "aidd", *args], stdin=subprocess.DEVNULL,
                              stdout=child, stderr=child, env=env, cwd=REPO, timeout=60,
                              check=False)
        os.close(child)
        child = -1
        out = b""
        while True:
            try:
                chunk = os.read(parent, 65536)
            except OSError:  # EIO: the pty's other end is closed and drained
                break
            if not chunk:
                break
            out += chunk
        assert done.returncode == 3, out
        return out
    finally:
        os.close(parent)
        if child >= 0:
            os.close(child)


@pytest.mark.parametrize(("extra", "env_add", "red"), [
    ((), {}, True),
    ((), {"NO_COLOR": "1"}, False),
    (("--color", "never"), {}, False),
    (("--color", "always"), {"NO_COLOR": "1"}, True),
])
def test_an_error_is_red_on_a_terminal_unless_told_not_to(
        aidd_env: dict[str, str], tmp_path: Path, extra: tuple[str, ...],
        env_add: dict[str, str], red: bool) -> None:
    env = {k: v for k, v in aidd_env.items() if k != "NO_COLOR"} | env_add
    out = _on_a_terminal(env, "--project-dir", str(tmp_path / "missing"), "--status", *extra)
    assert b"aidd: error: project directory" in out
    assert (RED in out) is red


def test_the_rule_and_the_console() -> None:
    assert color_wanted("auto", True, {}) is True
    assert color_wanted("auto", True, {"NO_COLOR": ""}) is True  # set but empty: no effect
    assert color_wanted("auto", True, {"NO_COLOR": "x"}) is False
    assert color_wanted("auto", False, {}) is False
    assert color_wanted("always", False, {"NO_COLOR": "x"}) is True
    assert color_wanted("never", True, {}) is False
    sink = io.BytesIO()  # not a terminal: `color` is asked with False
    assert Console(sink, color=lambda terminal: not terminal).color is True
    assert Console(sink).color is False
    Console(sink, color=lambda terminal: True).line("careful", "warn")
    assert sink.getvalue() == b"\x1b[33mcareful\x1b[0m\n"
