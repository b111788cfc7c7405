"""Short helper runs of an agent CLI (`--version`, its conversation list and export, the
doctor's login probe): stdin closed or given, output capped (it is untrusted), a process group
of its own that is killed whole when the time limit or the cap is passed, and a mark of its own
(session.orphans) by which anything it left running is killed when it returns (REL-1)."""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from aidd import spawning
from aidd.agents.base import Adapter
from aidd.clock import Clock, SystemClock
from aidd.session.orphans import MARK_VAR, child_environment, new_mark, sweep

UNKNOWN = "unknown"
MAX_OUTPUT = 8 * 1024 * 1024  # more is no answer: a helper's output is untrusted
# kilo needs ~5 s to start; 15 s was seen too short at load 9 (CI beside other test runs):
# the agent is silent anyway while aidd asks which conversation to nudge.
HELPER_TIMEOUT_S = 30.0


def run_cli(argv: Sequence[str], *, env: Mapping[str, str] | None, timeout_s: float,
            cwd: Path | None = None, stderr_too: bool = False, clock: Clock | None = None,
            stdin: bytes | None = None, max_bytes: int = MAX_OUTPUT) -> bytes | None:
    """The run's stdout (with stderr when `stderr_too`); None when it cannot start, times out
    or writes more than `max_bytes`. `env` None: aidd's own environment, unmarked (tests only;
    a run always passes one). `clock`: the run's, for the waits. `stdin`: written, then closed
    (else none)."""
    mark = new_mark()
    clock = clock or SystemClock()
    try:
        return _run(argv, None if env is None else {**env, MARK_VAR: mark}, cwd, stderr_too,
                    stdin, _Limits(clock.monotonic() + timeout_s, max_bytes, clock))
    finally:
        sweep(mark, clock)


class _Limits(NamedTuple):
    deadline: float
    max_bytes: int
    clock: Clock

    def left_ms(self) -> int:
        return max(0, math.ceil((self.deadline - self.clock.monotonic()) * 1000))


def _run(argv: Sequence[str], env: dict[str, str] | None, cwd: Path | None, stderr_too: bool,
         stdin: bytes | None, limits: _Limits) -> bytes | None:
    try:
        with spawning.LOCK:
            proc = subprocess.Popen(
                list(argv), cwd=cwd, env=env,
                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if stderr_too else subprocess.DEVNULL,
                start_new_session=True,  # so a timeout can kill the whole group
            )
            spawning.own(proc.pid)
    except OSError:
        return None
    try:
        with proc:
            if stdin is not None:
                _feed(proc, stdin)
            out = _read(proc, limits)
            if out is None or _exited(proc, limits) is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                return None
    finally:
        spawning.disown(proc.pid)
    return out


def _feed(proc: subprocess.Popen[bytes], data: bytes) -> None:
    """Write `data` to stdin and close it, from a thread: a helper that writes before it reads
    cannot block aidd on a full pipe."""
    def write() -> None:
        assert proc.stdin is not None  # stdin=PIPE above
        with contextlib.suppress(OSError), proc.stdin:  # it may exit without reading
            proc.stdin.write(data)

    threading.Thread(target=write, name="cliproc-stdin", daemon=True).start()


def _read(proc: subprocess.Popen[bytes], limits: _Limits) -> bytes | None:
    """stdout to EOF; None at the deadline or past the cap."""
    assert proc.stdout is not None  # stdout=PIPE above
    fd = proc.stdout.fileno()
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    chunks: list[bytes] = []
    size = 0
    while poller.poll(limits.left_ms()):
        data = os.read(fd, 65536)
        if not data:
            return b"".join(chunks)
        size += len(data)
        if size > limits.max_bytes:
            return None
        chunks.append(data)
    return None


def _exited(proc: subprocess.Popen[bytes], limits: _Limits) -> int | None:
    try:
        return proc.wait(timeout=limits.left_ms() / 1000)
    except subprocess.TimeoutExpired:
        return None


def probe_version(binary: str, env: Mapping[str, str] | None = None, timeout_s: float = 10.0,
                  clock: Clock | None = None) -> str:
    """`<binary> --version` with stdin closed: its first non-empty line, else `unknown`."""
    out = run_cli([binary, "--version"], env=None if env is None else child_environment(env),
                  timeout_s=timeout_s, stderr_too=True, clock=clock)
    if out is None:
        return UNKNOWN
    for line in out.decode("utf-8", "replace").splitlines():
        if line.strip():
            return line.strip()
    return UNKNOWN


def find_conversation(adapter: Adapter, binary: str, project_dir: Path, env: Mapping[str, str],
                      since_s: float, timeout_s: float = HELPER_TIMEOUT_S,
                      clock: Clock | None = None) -> str | None:
    """The conversation a run started, asked of the CLI in the run's directory and
    environment; None on any trouble: the nudge is then reported as not delivered (ADP-32)."""
    argv = adapter.conversations_argv(binary)
    if argv is None:
        return None
    out = run_cli(argv, env=env, timeout_s=timeout_s, cwd=project_dir, clock=clock)
    return None if out is None else adapter.pick_conversation(out, project_dir, since_s)


def holds_task(adapter: Adapter, binary: str, project_dir: Path, env: Mapping[str, str],
               conversation: str, timeout_s: float = HELPER_TIMEOUT_S,
               clock: Clock | None = None) -> bool | None:
    """Does `conversation` hold the prompt yet, asked of the CLI (its export)? None when the
    CLI cannot tell or any trouble: the nudge then carries the prompt again (issue 17)."""
    argv = adapter.export_argv(binary, conversation)
    if argv is None:
        return None
    out = run_cli(argv, env=env, timeout_s=timeout_s, cwd=project_dir, clock=clock)
    return None if out is None else adapter.holds_task(out, conversation)
