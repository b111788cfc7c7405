"""The Interrupt flag: first signal graceful, second urgent, and a descriptor that wakes poll."""

from __future__ import annotations

import os
import select
import signal
import threading

from aidd.run.signals import Interrupt, install


def _readable(fd: int, timeout_ms: int = 0) -> bool:
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(timeout_ms))


def test_first_signal_is_graceful_the_second_urgent() -> None:
    interrupt = Interrupt()
    assert not interrupt.is_set()
    interrupt.trigger("SIGTERM")
    assert (interrupt.is_set(), interrupt.name, interrupt.urgent) == (True, "SIGTERM", False)
    interrupt.trigger("SIGINT")
    assert (interrupt.name, interrupt.urgent) == ("SIGTERM", True)


def test_a_real_signal_wakes_a_poll_waiting_on_the_descriptor() -> None:
    """PEP 475 restarts an interrupted poll; the self-pipe is what ends the wait."""
    interrupt = Interrupt()
    restore = install(interrupt)
    try:
        assert not _readable(interrupt.fileno())
        timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM))
        timer.start()
        woke = _readable(interrupt.fileno(), timeout_ms=10_000)
        timer.join()
    finally:
        restore()
    assert woke
    assert interrupt.name == "SIGTERM"
