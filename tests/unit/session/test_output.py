"""The output path reads what the pty has and routes it as one batch (issue 33)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, cast

import pytest

from aidd.agents.base import Signals
from aidd.clock import SystemClock
from aidd.session import output
from aidd.session.output import OutputPump
from aidd.session.pty import AgentProcess
from aidd.session.stream import StreamRouter


class Terminal:
    """Hands out queued chunks, one per read, like a pty's 4 KiB reads; b"" when empty."""

    def __init__(self, master_fd: int, chunks: list[bytes]) -> None:
        self.master_fd = master_fd
        self.chunks = chunks
        self.reads = 0
        self.eof = False

    def read(self) -> bytes:
        self.reads += 1
        return self.chunks.pop(0) if self.chunks else b""


class Proc:
    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.pidfd = -1


class Parser:
    signals = Signals()

    def wants(self, data: bytes) -> bool:
        return False

    def line(self, raw: bytes) -> list[str]:
        return []


class Sink:
    def agent(self, data: bytes, *, echo: bool = True) -> None: ...

    def rendered(self, text: str) -> None: ...


@pytest.fixture
def readable() -> Iterator[int]:
    """A descriptor poll(2) reports readable, standing in for the pty master."""
    read_end, write_end = os.pipe()
    os.write(write_end, b"x")
    yield read_end
    os.close(read_end)
    os.close(write_end)


def _pump(terminal: Terminal) -> tuple[OutputPump, list[bytes]]:
    routed: list[bytes] = []
    pump = OutputPump(StreamRouter(Sink(), Parser()), routed.append, SystemClock(), None)
    return pump, routed


def test_what_the_pty_has_is_routed_in_one_batch(readable: int) -> None:
    terminal = Terminal(readable, [b"a" * 4096, b"b" * 4096, b"c\n"])
    pump, routed = _pump(terminal)
    assert pump.pump(cast(AgentProcess, Proc(terminal)), 1.0) == 8194
    assert routed == [b"a" * 4096 + b"b" * 4096 + b"c\n"]  # one log write, one console wake


def test_a_flood_is_cut_into_bounded_batches(readable: int,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output, "BATCH", 8192)
    terminal = Terminal(readable, [b"x" * 4096] * 5)
    pump, routed = _pump(terminal)
    proc: Any = Proc(terminal)
    assert pump.pump(proc, 1.0) == 8192  # back to the clock and `.stop` between batches
    assert pump.pump(proc, 1.0) == 8192
    assert pump.pump(proc, 1.0) == 4096
    assert [len(batch) for batch in routed] == [8192, 8192, 4096]
