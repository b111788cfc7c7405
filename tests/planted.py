"""What a hostile repository plants where aidd reads or writes: a symlink or a hard link to a
file outside the project, or a FIFO that blocks whoever opens it."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def plant(path: Path, kind: str, target: Path | None = None) -> Path:
    """`path` made a "symlink" or "hardlink" to `target`, or a "fifo"; parents are created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif target is None:
        raise ValueError(f"a {kind} needs a target")
    elif kind == "symlink":
        path.symlink_to(target)
    elif kind == "hardlink":
        os.link(target, path)
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return path


def within(seconds: float, call: Callable[[], T], fifo: Path) -> T:
    """`call()`'s value, asserting it came within `seconds` instead of blocking on the planted
    `fifo` (which is then opened for writing, so the stuck reader lets the test process go)."""
    done: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(call())
        except BaseException as exc:
            failed.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(5)
        raise AssertionError(f"still blocked on the FIFO {fifo} after {seconds} s")
    if failed:
        raise failed[0]
    return done[0]
