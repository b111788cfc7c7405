"""One gate command, run by aidd in the project: its output to the gate log (capped), the last
lines kept for the prompt, bounded by its timeout, and its whole process tree killed at the
timeout, on a stop, and after it exits (what it left running)."""

from __future__ import annotations

import os
import select
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

from aidd import spawning
from aidd.clock import Clock
from aidd.fsio import FileTooLargeError, UnsafePathError, open_file, read_file, write_all
from aidd.gate.commands import GateCommand
from aidd.logs.cleaning import clean_bytes
from aidd.session import proctree
from aidd.session.orphans import gate_environment, new_mark, not_of_gate

TAIL_LINES = 60  # what a red gate's summary shows the agent
_TAIL_BYTES = 64 * 1024
_LINE_CHARS = 400
LOG_CAP = 32 << 20  # bytes of one command's output kept in the gate log
JUNIT_LIMIT = 64 << 20
_GRACE_S = 2.0
_POLL_S = 0.25


class CommandRun(NamedTuple):
    """What one command did. `exit` is None when aidd killed it (timeout or stop)."""

    command: GateCommand
    exit: int | None
    timed_out: bool
    cancelled: bool
    duration_s: float
    tail: tuple[str, ...]
    failing: frozenset[str] | None  # from its fresh JUnit report; None without one
    junit_problem: str | None = None  # why a configured report could not be used

    @property
    def ok(self) -> bool:
        return self.exit == 0 and not self.failing

    @property
    def why(self) -> str:
        """The command's failure in words, for a summary or a console line."""
        if self.timed_out:
            return f"timed out after {self.command.timeout_s}s"
        if self.cancelled:
            return "stopped"
        return f"exited {self.exit}"


class GateRequest(NamedTuple):
    commands: tuple[GateCommand, ...]
    root: Path  # where the commands run: the project, or a slot's worktree (--parallel N)
    env: Mapping[str, str]
    log: Path  # .automaker/iterations/NNN.gate.log, appended to
    clock: Clock
    cancelled: Callable[[], bool]  # a signal or a stop request: kill the command, stop
    project: Path | None = None  # the project holding the log, when not `root`


def run_gate(req: GateRequest) -> tuple[CommandRun, ...]:
    """Each command in order; a stop request ends the gate after the command it cut short."""
    runs: list[CommandRun] = []
    fd = open_file(req.project or req.root, req.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                   create_dirs=True)
    try:
        for command in req.commands:
            runs.append(_run_command(command, req, fd))
            if runs[-1].cancelled:
                break
    finally:
        os.close(fd)
    return tuple(runs)


def _run_command(command: GateCommand, req: GateRequest, log_fd: int) -> CommandRun:
    clock = req.clock
    write_all(log_fd, f"=== gate {command.name}: {command.run}\n".encode())
    report = _report_stat(req.root, command)
    # Its own tag: what else aidd runs meanwhile (agents, another slot's gate, git) is never
    # taken for what this command left running.
    run = new_mark()
    scope = proctree.TreeScope(foreign=lambda: not_of_gate(req.env, run))
    start = clock.monotonic()
    with spawning.LOCK:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", command.run], cwd=req.root, env=gate_environment(req.env, run),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True)
        spawning.own(proc.pid)
    assert proc.stdout is not None
    out = _Output(proc.stdout.fileno(), log_fd, clock)
    deadline = start + command.timeout_s
    timed_out = cancelled = False
    try:
        while proc.poll() is None or not out.eof:
            if proc.poll() is None and clock.monotonic() >= deadline:
                timed_out = True
            elif proc.poll() is None and req.cancelled():
                cancelled = True
            if timed_out or cancelled:
                break
            out.pump(_POLL_S)
            if proc.poll() is not None and not out.eof:
                out.pump(0.0)  # exited: read what is left without waiting on a child's pipe
                break
    finally:
        # Whatever it left running (a server, a watcher) dies with it, as an agent's would.
        proctree.terminate(lambda: scope.snapshot(proc.pid), grace_s=_GRACE_S, clock=clock,
                           root=proctree.Root(proc.pid, lambda: proc.poll() is None),
                           pump=out.pump)
        proc.wait()
        spawning.disown(proc.pid)
        out.pump(0.0)
        proc.stdout.close()
    duration = clock.monotonic() - start
    status = None if (timed_out or cancelled) else _status(proc.returncode)
    failing, problem = _junit(req.root, command, report) if status is not None else (None, None)
    write_all(log_fd, f"=== gate {command.name}: "
              f"{'killed' if status is None else f'exit {status}'} after {duration:.1f}s\n"
              .encode())
    return CommandRun(command, status, timed_out, cancelled, duration, out.tail(), failing,
                      problem)


def _status(code: int) -> int:
    return 128 - code if code < 0 else code


class _Output:
    """The command's output: into the log up to the cap, the last bytes kept for the tail."""

    def __init__(self, fd: int, log_fd: int, clock: Clock) -> None:
        self.fd, self.log_fd, self.clock = fd, log_fd, clock
        os.set_blocking(fd, False)
        self.eof = False
        self.logged = 0
        self.last = bytearray()

    def pump(self, timeout_s: float) -> bool:
        if self.eof:  # nothing to wait on: a plain wait, so a kill's grace never spins
            self.clock.sleep(timeout_s)
            return False
        ready, _, _ = select.select([self.fd], [], [], max(timeout_s, 0.0))
        got = False
        while ready:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                self.eof = True
                break
            got = True
            self._keep(chunk)
        return got

    def _keep(self, chunk: bytes) -> None:
        room = LOG_CAP - self.logged
        if room > 0:
            write_all(self.log_fd, chunk[:room])
            if len(chunk) >= room:
                write_all(self.log_fd, b"\n[gate output cut here: the rest was not kept]\n")
        self.logged += len(chunk)
        self.last += chunk
        del self.last[:-_TAIL_BYTES]

    def tail(self) -> tuple[str, ...]:
        # cleaned as a log is (LOG-21): no escape sequence or control byte reaches the prompt
        text = clean_bytes(bytes(self.last)).decode("utf-8", "replace")
        lines = [line[:_LINE_CHARS] for line in text.split("\n")]
        while lines and not lines[-1].strip():
            lines.pop()
        return tuple(lines[-TAIL_LINES:])


def _report_stat(root: Path, command: GateCommand) -> tuple[int, int] | None:
    """The report's (mtime, size) before the run: one the command did not rewrite is stale."""
    if command.junit is None:
        return None
    try:
        info = (root / command.junit).lstat()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def _junit(root: Path, command: GateCommand, before: tuple[int, int] | None
           ) -> tuple[frozenset[str] | None, str | None]:
    if command.junit is None:
        return None, None
    from aidd.gate.junit import JunitError, failing_tests  # lazy: xml, for a gate with reports

    path = root / command.junit
    try:
        info = path.lstat()
        if before is not None and (info.st_mtime_ns, info.st_size) == before:
            return None, f"{command.junit} was not rewritten by the run (stale)"
        return failing_tests(read_file(root, path, JUNIT_LIMIT)), None
    except FileNotFoundError:
        return None, f"{command.junit} was not written"
    except (UnsafePathError, FileTooLargeError, JunitError) as exc:
        return None, f"{command.junit}: {exc}"
    except OSError as exc:
        return None, f"{command.junit}: {exc.strerror or exc}"
