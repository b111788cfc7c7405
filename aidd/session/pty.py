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

The kernel kills the agent when aidd dies (PR_SET_PDEATHSIG, below): set by util-linux's
`setpriv` exec'd in front of the CLI where it can, since a `preexec_fn` makes CPython copy the
whole aidd process with fork (2.5 ms an attempt) instead of vfork (0.1 ms).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import queue
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
import tty
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path

import pexpect
from pexpect import fdpexpect
from pexpect.spawnbase import SpawnBase

from aidd import spawning
from aidd.session import proctree

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
    """Writes bytes to the agent's stdin pipe, never blocking the caller: what the pipe takes
    at once is written at once (the usual prompt: no thread to start, issue 33), the rest, and
    all that follows it, in order from a daemon thread started for it."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd = fd
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()  # None: close
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.closed = False  # no more writes accepted
        self.broken = False  # the reader went away (EPIPE)

    def send(self, data: bytes) -> bool:
        if self.closed or self.broken:
            return False
        if self._thread is None:
            data = self._write_now(data)
            if self.broken:
                return False
            if not data:
                return True
            self._thread = threading.Thread(target=self._run, name="aidd-stdin", daemon=True)
            self._thread.start()
        self._queue.put(data)
        return True

    def close(self) -> None:
        """Close stdin after the bytes already queued (the CLI then sees EOF)."""
        if not self.closed:
            self.closed = True
            self._end()

    def abort(self) -> None:
        """Stop at once, whatever is left unwritten; waits briefly for the thread."""
        self.closed = True
        self._stop.set()
        self._end()
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    def _end(self) -> None:
        """The descriptor is the thread's once it runs: it closes it after the queue."""
        if self._thread is not None:
            self._queue.put(None)
        elif self._fd >= 0:
            _close_quietly(self._fd)
            self._fd = -1

    def _write_now(self, data: bytes) -> bytes:
        """What the pipe did not take at once."""
        try:
            return data[os.write(self._fd, data) :]
        except BlockingIOError:
            return data
        except OSError:
            self.broken = True  # EPIPE: the agent closed its stdin or died
            return b""

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                data = self._queue.get()
                if data is None or not self._write_all(data):
                    break
        finally:
            _close_quietly(self._fd)

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
        launch, preexec = _dying_with_me(argv, cwd, env)
        self.terminal = Terminal()
        stdin_read, stdin_write = os.pipe()
        try:
            with spawning.LOCK:
                self._popen = subprocess.Popen(
                    launch, cwd=cwd, env=dict(env), stdin=stdin_read,
                    stdout=self.terminal.slave_fd, stderr=self.terminal.slave_fd,
                    start_new_session=True, preexec_fn=preexec)
                spawning.own(self._popen.pid)
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
        spawning.disown(self.pid)  # reaped
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


def _close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


def _pidfd(pid: int) -> int:
    """A descriptor that becomes readable when `pid` exits (Linux 5.3+), else -1."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1


def _dying_with_me(argv: list[str], cwd: Path,
                   env: Mapping[str, str]) -> tuple[list[str], Callable[[], None] | None]:
    """What to start, and the `preexec_fn`, so that the kernel SIGKILLs the agent if aidd dies
    without ending it (kill -9, a crash, the OOM killer): no agent runs on unsupervised, and
    paid for, until the next run's sweep; its descendants carry the run's mark for that sweep.

    Through `setpriv --pdeathsig KILL --` where it can (Popen then uses vfork), else the
    `preexec_fn`. Either way the agent keeps its pid, argv, session and group, and the signal
    comes when the thread that started it ends (docs/parallel.md). setpriv sets it after its
    exec, not before: if aidd dies in that window (well under a millisecond) the agent runs
    on without it, and the next run's sweep of the mark recorded in the lock kills it
    (session/orphans, REL-1), as it kills the agent's descendants."""
    setpriv = _setpriv(env.get("PATH", os.defpath))
    if setpriv is None:
        return argv, proctree.dies_with_me(signal.SIGKILL)
    _startable(argv[0], cwd, env)
    return [setpriv, "--pdeathsig", "KILL", "--", *argv], None


@cache
def _setpriv(search: str) -> str | None:
    """util-linux's `setpriv` on `search` (a PATH) when it can set the death signal here: it
    sets it and then runs itself for its version, once a run (one process), never per attempt.
    None off Linux, for one without --pdeathsig (util-linux before 2.33, busybox's) and where
    the kernel refuses the prctl."""
    path = shutil.which("setpriv", path=search)
    if not sys.platform.startswith("linux") or path is None or not Path(path).is_absolute():
        return None
    try:
        with spawning.LOCK:
            done = subprocess.run([path, "--pdeathsig", "KILL", "--", path, "--version"],
                                  stdin=subprocess.DEVNULL, capture_output=True, timeout=10,
                                  check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return path if done.returncode == 0 and b"util-linux" in done.stdout else None


def _startable(program: str, cwd: Path, env: Mapping[str, str]) -> None:
    """Raise what Popen raises for a CLI that cannot start: behind setpriv the exec that fails
    is setpriv's own, after Popen returned, and the attempt would see an exit 127 instead."""
    named = os.sep in program  # a path, else looked up on the agent's PATH as exec does
    target = str(cwd / program) if named else program
    if shutil.which(target, path=env.get("PATH", os.defpath)) is None:
        code = errno.EACCES if named and Path(target).exists() else errno.ENOENT
        raise OSError(code, os.strerror(code), program)
