"""The attempt's output path (SUP-12, SUP-14): wait for the agent's output, its exit or aidd's
interrupt; read what the pty has and hand it on (the runner routes it through `stream` to the
log, the console and the adapter's parser)."""

from __future__ import annotations

import math
import select
from collections.abc import Callable

from aidd.clock import Clock
from aidd.session.pty import AgentProcess
from aidd.session.request import InterruptFlag
from aidd.session.stream import StreamRouter

BATCH = 256 << 10  # bytes read before they are routed, at most
DRAIN_CAP_S = 10.0  # a descendant that keeps printing after the agent exits cannot stall us


class OutputPump:
    def __init__(self, router: StreamRouter, on_output: Callable[[bytes], None], clock: Clock,
                 interrupt: InterruptFlag | None) -> None:
        self.router = router
        self._on_output = on_output
        self._clock = clock
        self._interrupt = interrupt

    def pump(self, proc: AgentProcess, timeout_s: float) -> int:
        """Wait for output or the agent's exit, at most `timeout_s`; route what arrives."""
        terminal = proc.terminal
        ready = self._poller(proc).poll(math.ceil(timeout_s * 1000))
        if terminal.eof or not any(fd == terminal.master_fd for fd, _ in ready):
            return 0
        return self._read(proc)

    def drain(self, proc: AgentProcess, quiet_s: float) -> None:
        """After an exit: read until EOF, or until no byte came for `quiet_s` (SUP-14)."""
        start = self._clock.monotonic()
        quiet_until = start + quiet_s
        while not proc.terminal.eof and not self._interrupted():
            now = self._clock.monotonic()
            left = min(quiet_until, start + DRAIN_CAP_S) - now
            if left <= 0:
                break
            if self.pump(proc, min(left, 0.25)):
                quiet_until = self._clock.monotonic() + quiet_s
        self.router.finish()

    def _poller(self, proc: AgentProcess) -> select.poll:
        """Wakes on output, on the agent's exit (its pidfd) and on aidd's interrupt flag."""
        poller = select.poll()
        if not proc.terminal.eof:
            poller.register(proc.terminal.master_fd, select.POLLIN)
        if proc.pidfd >= 0:
            poller.register(proc.pidfd, select.POLLIN)
        interrupt = self._interrupt
        if interrupt is not None and not interrupt.is_set():  # once set, it would never block
            poller.register(interrupt.fileno(), select.POLLIN)
        return poller

    def _read(self, proc: AgentProcess) -> int:
        """What the pty has now, routed as one batch; returns the bytes read.

        A pty hands over at most 4 KiB per read: routing each read on its own cost a log
        write, a console wake-up and a parse check per 4 KiB. The reads stop at the first
        empty one or at `BATCH` bytes, so a flood still yields to the clock and `.stop`
        (a batch takes milliseconds).
        """
        terminal = proc.terminal
        chunks: list[bytes] = []
        total = 0
        while total < BATCH and (data := terminal.read()):
            chunks.append(data)
            total += len(data)
        if chunks:
            self._on_output(chunks[0] if len(chunks) == 1 else b"".join(chunks))
        if terminal.eof:
            self.router.finish()
        return total

    def _interrupted(self) -> bool:
        return self._interrupt is not None and self._interrupt.is_set()
