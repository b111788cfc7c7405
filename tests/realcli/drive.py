"""Run one real CLI the way aidd does: stdin a pipe, stdout/stderr on ptys (or pipes), own session.

Captures the exact bytes of each stream with their arrival times; lets a test write to stdin,
signal the process group and wait for output, with every wait bounded.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Chunk:
    at_s: float
    stream: str  # "stdout" | "stderr"
    data: bytes


@dataclass
class Capture:
    started: float = field(default_factory=time.monotonic)
    chunks: list[Chunk] = field(default_factory=list)
    cond: threading.Condition = field(default_factory=threading.Condition)

    def add(self, stream: str, data: bytes) -> None:
        with self.cond:
            self.chunks.append(Chunk(round(time.monotonic() - self.started, 3), stream, data))
            self.cond.notify_all()

    def bytes_of(self, stream: str) -> bytes:
        with self.cond:
            return b"".join(c.data for c in self.chunks if c.stream == stream)


def _raw_pty() -> tuple[int, int]:
    """A pty pair with output post-processing off and a 200x50 window (SUP-11)."""
    master, slave = os.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.OPOST
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    return master, slave


def _take_tty() -> None:
    """In the child, after setsid: make the stdout pty the controlling terminal."""
    with contextlib.suppress(OSError):
        fcntl.ioctl(1, termios.TIOCSCTTY, 0)


class CliProcess:
    def __init__(
        self, argv: list[str], env: dict[str, str], cwd: Path, *, use_pty: bool = True
    ) -> None:
        self.argv = argv
        self.capture = Capture()
        self._masters: dict[str, int] = {}
        slaves: dict[str, int] = {}
        if use_pty:
            for stream in ("stdout", "stderr"):
                self._masters[stream], slaves[stream] = _raw_pty()
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=slaves.get("stdout", subprocess.PIPE),
            stderr=slaves.get("stderr", subprocess.PIPE),
            start_new_session=True,
            preexec_fn=_take_tty if use_pty else None,
        )
        for fd in slaves.values():
            os.close(fd)
        assert self.proc.stdin is not None
        self._stdin = self.proc.stdin
        sources = self._masters or self._pipe_fds()
        self._readers = [
            threading.Thread(target=self._pump, args=(s, fd), daemon=True)
            for s, fd in sources.items()
        ]
        for reader in self._readers:
            reader.start()

    def _pipe_fds(self) -> dict[str, int]:
        assert self.proc.stdout is not None
        assert self.proc.stderr is not None
        return {"stdout": self.proc.stdout.fileno(), "stderr": self.proc.stderr.fileno()}

    def _pump(self, stream: str, fd: int) -> None:
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: every slave side closed
                return
            if not data:
                return
            self.capture.add(stream, data)

    def write(self, data: bytes) -> None:
        """Write to stdin from a thread, so a large prompt never blocks reading the output."""

        def _write() -> None:
            with contextlib.suppress(OSError, ValueError):
                self._stdin.write(data)
                self._stdin.flush()

        writer = threading.Thread(target=_write, daemon=True)
        writer.start()
        writer.join(timeout=60)

    def close_stdin(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._stdin.close()

    def signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def wait_output(
        self, predicate: Callable[[bytes], bool], timeout_s: float, stream: str = "stdout"
    ) -> bool:
        deadline = time.monotonic() + timeout_s
        with self.capture.cond:
            while not predicate(
                b"".join(c.data for c in self.capture.chunks if c.stream == stream)
            ):
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    return predicate(self.capture.bytes_of(stream))
                self.capture.cond.wait(min(left, 0.2))
        return True

    def wait(self, timeout_s: float) -> int | None:
        """The exit status (negative: killed by that signal), or None while it still runs."""
        try:
            code = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None
        self._drain()
        return code

    def _drain(self) -> None:
        for reader in self._readers:
            reader.join(timeout=1.0)  # a descendant may hold the terminal open (SUP-14)

    def kill_group(self) -> None:
        self.signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.kill_group()
        self.close_stdin()
        self._drain()
        for fd in self._masters.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._masters.clear()

    def session_members(self) -> list[str]:
        """`pid name` of every live process still in the CLI's session (leftovers, SUP-42)."""
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, IndexError, ValueError):
                head, _, rest = stat.read_text().rpartition(")")
                fields = rest.split()
                if int(fields[3]) == self.proc.pid and fields[0] != "Z":
                    found.append(f"{stat.parent.name} {head.partition('(')[2]}")
        return sorted(found)

    def elapsed(self) -> float:
        return round(time.monotonic() - self.capture.started, 3)

    def first_byte_s(self, stream: str = "stdout") -> float | None:
        return next((c.at_s for c in self.capture.chunks if c.stream == stream), None)
