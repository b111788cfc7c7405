"""The agent's terminal and stdin (SUP-10, SUP-11, ADP-21, ADP-22). The only pexpect user.

The agent's stdout and stderr are the slave side of a pty that aidd creates, so the CLI sees a
terminal and flushes promptly; aidd reads the master side through pexpect. The prompt travels
through a pipe instead, written from a thread: a pty would cut input lines at 4095 bytes, and
a large prompt must never block reading the agent's output.

The pty is deliberately not the agent's *controlling* terminal (no TIOCSCTTY): when a session
leader with a controlling pty exits, the kernel sends SIGHUP to the terminal's foreground group,
which would kill the agent's leftovers before aidd can name them and makes --keep-children
impossible (SUP-42, AC-42). Without one, a tool that opens /dev/tty to ask a human (ssh, sudo,
git credentials) fails at once instead of hanging until the idle kill.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import queue
import select
import signal
import struct
import subprocess
import termios
import threading
import tty
from collections.abc import Mapping
from pathlib import Path

import pexpect
from pexpect import fdpexpect
from pexpect.spawnbase import SpawnBase

from aidd import spawning
from aidd.session.proctree import dies_with_me

ROWS, COLUMNS = 50, 200
READ_SIZE = 1 << 16


class Terminal:
    """A pty whose master side aidd reads; output post-processing off (no `\\n` -> `\\r\\n`)."""

    def __init__(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)  # no OPOST, no echo, no line discipline surprises
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        self.slave_fd = slave
        os.set_blocking(master, False)
        self._reader = fdpexpect.fdspawn(master, timeout=0)
        self.master_fd = master
        self.eof = False

    def release_slave(self) -> None:
        """After the agent started: only the agent's tree holds the slave, so EOF can come."""
        if self.slave_fd >= 0:
            os.close(self.slave_fd)
            self.slave_fd = -1

    def read(self) -> bytes:
        """What one read gives now (b"" if nothing); sets `eof` once every writer is gone.

        A pty hands over at most about 4 KiB per read (its line discipline's buffer);
        session/output gathers the reads that find data into one batch. The master is
        non-blocking, so pexpect's per-read select(2) is skipped.
        """
        if self.eof:
            return b""
        try:
            data: bytes = _read_now(self._reader, READ_SIZE)
        except BlockingIOError:
            return b""
        except (pexpect.EOF, OSError):
            self.eof = True
            return b""
        return data

    def close(self) -> None:
        self.release_slave()
        if self.master_fd >= 0:
            with contextlib.suppress(OSError):
                self._reader.close()
            self.master_fd = -1
            self.eof = True




class StdinFeeder:
    """Writes queued bytes to the agent's stdin pipe from a daemon thread."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd = fd
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()  # None: close
        self._stop = threading.Event()
        self.closed = False  # no more writes accepted
        self.broken = False  # the reader went away (EPIPE)
        self._thread = threading.Thread(target=self._run, name="aidd-stdin", daemon=True)
        self._thread.start()

    def send(self, data: bytes) -> bool:
        if self.closed or self.broken:
            return False
        self._queue.put(data)
        return True

    def close(self) -> None:
        """Close stdin after the bytes already queued (the CLI then sees EOF)."""
        if not self.closed:
            self.closed = True
            self._queue.put(None)

    def abort(self) -> None:
        """Stop at once, whatever is left unwritten; waits briefly for the thread."""
        self.closed = True
        self._stop.set()
        self._queue.put(None)
        self._thread.join(timeout=1.0)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                data = self._queue.get()
                if data is None or not self._write_all(data):
                    break
        finally:
            with contextlib.suppress(OSError):
                os.close(self._fd)

    def _write_all(self, data: bytes) -> bool:
        view = memoryview(data)
        poller = select.poll()
        poller.register(self._fd, select.POLLOUT)
        while view and not self._stop.is_set():
            if not poller.poll(100):
                continue
            try:
                view = view[os.write(self._fd, view) :]
            except BlockingIOError:
                continue
            except OSError:
                self.broken = True  # EPIPE: the agent closed its stdin or died
                return False
        return not view


class AgentProcess:
    """One launched agent CLI: own session and process group, pty output, piped stdin."""

    def __init__(self, argv: list[str], cwd: Path, env: Mapping[str, str]) -> None:
        self.terminal = Terminal()
        stdin_read, stdin_write = os.pipe()
        try:
            with spawning.LOCK:
                self._popen = subprocess.Popen(
                    argv,
                    cwd=cwd,
                    env=dict(env),
                    stdin=stdin_read,
                    stdout=self.terminal.slave_fd,
                    stderr=self.terminal.slave_fd,
                    start_new_session=True,
                    # Linux: the kernel SIGKILLs the agent if aidd dies without ending it (kill -9,
                    # a crash, the OOM killer): no agent runs on unsupervised, and paid for, until
                    # the next run's sweep. Its descendants carry the run's mark for that sweep.
                    preexec_fn=dies_with_me(signal.SIGKILL),
                )
        except BaseException:
            os.close(stdin_write)
            self.terminal.close()
            raise
        finally:
            os.close(stdin_read)
        self.terminal.release_slave()
        self.pid = self._popen.pid
        self.stdin = StdinFeeder(stdin_write)
        self.pidfd = _pidfd(self.pid)

    def poll(self) -> int | None:
        """The exit status once the agent has ended (128+N after signal N), else None."""
        code = self._popen.poll()
        if code is None:
            return None
        if self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1
        return 128 - code if code < 0 else code

    def signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)

    def close(self) -> None:
        self.stdin.abort()
        self.terminal.close()
        if self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1


# fdspawn.read_nonblocking adds a select(2) per read; the fd is non-blocking already, so the
# base class's plain os.read (with pexpect's EOF handling) is enough.
_read_now = SpawnBase.read_nonblocking


def _pidfd(pid: int) -> int:
    """A descriptor that becomes readable when `pid` exits (Linux 5.3+), else -1."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1
