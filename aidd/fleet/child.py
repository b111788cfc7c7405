"""aidd as the activity's child: its own process group, and dead with the worker.

PR_SET_PDEATHSIG sends the child SIGTERM when the thread that forked it dies, so a worker killed
with `kill -9` leaves no aidd behind, and aidd, on that SIGTERM, ends its agent's whole tree
(without it the agent ran on as an orphan: the issue's measurement). The fork happens on the
worker's event-loop thread, which lives as long as the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path

from aidd.session.proctree import dies_with_me


def aidd_argv(project_dir: Path, cli: str, args: list[str]) -> list[str]:
    """Plain aidd, with the interpreter running the worker (the same install of aidd)."""
    return [sys.executable, "-m", "aidd", "--project-dir", str(project_dir), "--cli", cli, *args]


async def spawn(argv: list[str], cwd: Path, env: Mapping[str, str],
                log: Path) -> asyncio.subprocess.Process:
    """Start `argv` in a new session (its own process group), its output appended to `log`."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as sink:
        return await asyncio.create_subprocess_exec(
            *argv, cwd=_existing(cwd), env=dict(env), stdin=asyncio.subprocess.DEVNULL, stdout=sink,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True,
            preexec_fn=dies_with_me(signal.SIGTERM))


def _existing(directory: Path) -> Path:
    """`directory`, else its nearest ancestor that is one: a project directory that does not
    exist yet is aidd's to create (or to refuse in one line), as when aidd runs by hand."""
    return next(p for p in (directory, *directory.parents) if p.is_dir())


def terminate(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM to aidd alone: it ends its agent's tree itself and exits 124."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)


def kill_group(proc: asyncio.subprocess.Process) -> None:
    """The last resort, when aidd did not end after SIGTERM: its whole process group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
