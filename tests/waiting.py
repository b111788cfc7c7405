"""Waiting in tests for what a real process makes true: one poll loop, one way to fail."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(check: Callable[[], object], timeout: float = 30, what: str = "") -> None:
    """Poll `check` until it is truthy; fail after `timeout` seconds (an upper bound: a slow,
    loaded machine only makes the wait longer, never the test wrong).

    It raises AssertionError rather than pytest.fail so it works the same in worker threads."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or check}")
        time.sleep(0.02)
