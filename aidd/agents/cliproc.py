"""Short helper runs of an agent CLI (`--version`, `session list`): stdin closed, a process
group of its own that is killed whole when the time limit passes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path


def run_cli(argv: Sequence[str], *, env: Mapping[str, str] | None, timeout_s: float,
            cwd: Path | None = None, stderr_too: bool = False) -> bytes | None:
    """The run's stdout (with stderr when `stderr_too`); None when it cannot start or times
    out."""
    try:
        proc = subprocess.Popen(
            list(argv), cwd=cwd, env=None if env is None else dict(env),
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
