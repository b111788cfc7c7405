"""SIGINT/SIGTERM/SIGHUP to aidd become an Interrupt the main flow acts on (SUP-81, EXIT-7)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupt:
    """Set by a signal handler; read by the attempt runner and the run loop.

    The first signal asks for a graceful shutdown; a second one makes it `urgent`
    (kill without the grace period).
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self.name: str | None = None
        self.urgent = False
        self.on_signal: Callable[[str], None] | None = None
        self._wake_r, self._wake_w = os.pipe()  # non-inheritable
        os.set_blocking(self._wake_w, False)

    def fileno(self) -> int:
        """Readable once a signal has arrived, so a poll(2) waiting on it wakes at once. Without
        it nothing would: PEP 475 runs the handler, then restarts the poll with its remaining
        timeout."""
        return self._wake_r

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)

    def trigger(self, name: str) -> None:
        with contextlib.suppress(OSError):  # full: already readable
            os.write(self._wake_w, b"\0")
        if self._event.is_set():
            self.urgent = True
            return
        self.name = name
        self._event.set()
        if self.on_signal is not None:
            self.on_signal(name)


def install(interrupt: Interrupt) -> Callable[[], None]:
    """Route the handled signals to `interrupt`; returns a function restoring the old handlers."""

    def handler(signum: int, _frame: FrameType | None) -> None:
        interrupt.trigger(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, handler) for sig in HANDLED}

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    return restore
