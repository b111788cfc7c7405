"""Short helper runs of an agent CLI (`--version`, `session list`): stdin closed, a process
group of its own that is killed whole when the time limit passes, and a mark of its own
(aidd.session.orphans) by which anything it left running is killed when it returns (REL-1)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from aidd.clock import SystemClock
from aidd.session.orphans import MARK_VAR, new_mark, sweep


def run_cli(argv: Sequence[str], *, env: Mapping[str, str] | None, timeout_s: float,
            cwd: Path | None = None, stderr_too: bool = False) -> bytes | None:
    """The run's stdout (with stderr when `stderr_too`); None when it cannot start or times
    out. `env` None: aidd's own environment, unmarked (tests only; a run always passes one)."""
    mark = new_mark()
    try:
        return _run(argv, None if env is None else {**env, MARK_VAR: mark}, timeout_s, cwd,
                    stderr_too)
    finally:
        sweep(mark, SystemClock())


def _run(argv: Sequence[str], env: dict[str, str] | None, timeout_s: float, cwd: Path | None,
         stderr_too: bool) -> bytes | None:
    try:
        proc = subprocess.Popen(
            list(argv), cwd=cwd, env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if stderr_too else subprocess.DEVNULL,
            start_new_session=True,  # so a timeout can kill the whole group
        )
    except OSError:
        return None
    with proc:
        try:
            out, _ = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            return None
    return out
