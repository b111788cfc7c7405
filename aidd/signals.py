"""SIGINT/SIGTERM/SIGHUP to aidd become an Interrupt the main flow acts on (SUP-81, EXIT-7)."""

from __future__ import annotations

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

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)

    def trigger(self, name: str) -> None:
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
