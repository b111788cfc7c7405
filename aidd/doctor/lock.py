"""Is the project's lock free? Asked as a run would take it (a non-blocking flock on the file,
released at once, nothing written), and who holds it, from its record."""

from __future__ import annotations

import contextlib
import fcntl
import os

from aidd.console import aidd_command
from aidd.doctor.findings import Finding, ok, warn
from aidd.fsio import open_file
from aidd.project.lockfile import HolderState, lock_holder
from aidd.project.paths import ProjectPaths
from aidd.session import procfs


def check_lock(paths: ProjectPaths) -> Finding:
    if not paths.lock.exists():
        return ok("lock", "free (no lock file)")
    holder = lock_holder(paths.root, paths.lock, procfs)
    who = (f"aidd pid {holder.pid or '?'}, started {holder.started_at or '?'}, on "
           f"{holder.host or '?'}")
    if _flocked(paths) is False:
        return warn("lock", f"held by {who}: another run cannot start now",
                    _ask_to_stop(paths))
    if holder.state is HolderState.OTHER_HOST:
        return warn("lock", f"the record names {who}, another host: cannot tell whether "
                    "it still runs", "make sure no aidd runs on this project there")
    if holder.state is HolderState.ALIVE:
        return warn("lock", f"held by {who} (its lock file was replaced under it)",
                    _ask_to_stop(paths))
    if holder.state is HolderState.GONE:
        return ok("lock", f"free (the record of {who} is stale: a run reclaims it)")
    return ok("lock", "free")


def _ask_to_stop(paths: ProjectPaths) -> str:
    return f"wait for it to end, or ask it to stop: {aidd_command(paths.root, '--stop')}"


def _flocked(paths: ProjectPaths) -> bool | None:
    """True when the flock could be taken (and was let go), False when it is held, None when
    the file cannot be opened (a planted link or FIFO: the links check reports it)."""
    try:
        fd = open_file(paths.root, paths.lock, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)  # closing lets the flock go
    return True
