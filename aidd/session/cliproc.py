"""Short helper runs of an agent CLI (`--version`, its conversation list): stdin closed, a
process group of its own that is killed whole when the time limit passes, and a mark of its
own (session.orphans) by which anything it left running is killed when it returns (REL-1)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from aidd.agents.base import Adapter
from aidd.clock import Clock, SystemClock
from aidd.session.orphans import MARK_VAR, new_mark, sweep

UNKNOWN = "unknown"


def run_cli(argv: Sequence[str], *, env: Mapping[str, str] | None, timeout_s: float,
            cwd: Path | None = None, stderr_too: bool = False,
            clock: Clock | None = None, stdin: bytes | None = None) -> bytes | None:
    """The run's stdout (with stderr when `stderr_too`); None when it cannot start or times
    out. `env` None: aidd's own environment, unmarked (tests only; a run always passes one).
    `clock`: the run's, for the sweep's waits. `stdin`: written, then closed (else none)."""
    mark = new_mark()
    try:
        return _run(argv, None if env is None else {**env, MARK_VAR: mark}, timeout_s, cwd,
                    stderr_too, stdin)
    finally:
        sweep(mark, clock or SystemClock())


def _run(argv: Sequence[str], env: dict[str, str] | None, timeout_s: float, cwd: Path | None,
         stderr_too: bool, stdin: bytes | None = None) -> bytes | None:
    try:
        proc = subprocess.Popen(
            list(argv), cwd=cwd, env=env,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if stderr_too else subprocess.DEVNULL,
            start_new_session=True,  # so a timeout can kill the whole group
        )
    except OSError:
        return None
    with proc:
        try:
            out, _ = proc.communicate(stdin, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            return None
    return out


def probe_version(binary: str, env: Mapping[str, str] | None = None, timeout_s: float = 10.0,
                  clock: Clock | None = None) -> str:
    """`<binary> --version` with stdin closed: its first non-empty line, else `unknown`."""
    out = run_cli([binary, "--version"], env=env, timeout_s=timeout_s, stderr_too=True,
                  clock=clock)
    if out is None:
        return UNKNOWN
    for line in out.decode("utf-8", "replace").splitlines():
        if line.strip():
            return line.strip()
    return UNKNOWN


def find_conversation(adapter: Adapter, binary: str, project_dir: Path, env: Mapping[str, str],
                      since_s: float, timeout_s: float = 15.0,
                      clock: Clock | None = None) -> str | None:
    """The conversation a run started, asked of the CLI in the run's directory and
    environment; None on any trouble: the nudge is then reported as not delivered (ADP-32)."""
    argv = adapter.conversations_argv(binary)
    if argv is None:
        return None
    out = run_cli(argv, env=env, timeout_s=timeout_s, cwd=project_dir, clock=clock)
    return None if out is None else adapter.pick_conversation(out, project_dir, since_s)
