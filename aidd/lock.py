"""Single-instance lock on `.automaker/aidd.lock` (SUP-80): flock held for the whole run."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from aidd import __version__
from aidd.errors import LockHeldError


def process_start_ticks(pid: int) -> int | None:
    """Start time of `pid` in clock ticks since boot (Linux), to tell a reused pid apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[19]) if len(fields) > 19 else None


def holder_alive(info: dict[str, Any]) -> bool:
    """Is the process named in a lock file's JSON still the one that wrote it?"""
    pid = info.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    ticks = process_start_ticks(pid)
    if ticks is None:
        return False
    recorded = info.get("pid_start")
    return recorded is None or recorded == ticks


def read_lock(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@dataclass
class ProjectLock:
    path: Path
    fd: int = -1
    reclaimed_pid: int | None = None

    def acquire(self, started: datetime, argv: tuple[str, ...]) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            info = read_lock(self.path) or {}
            raise LockHeldError(
                f"another aidd (pid {info.get('pid', '?')}, started "
                f"{info.get('started_at', '?')}) is running on {self.path.parent.parent}"
            ) from None
        self.fd = fd
        old = read_lock(self.path)
        if old and isinstance(old.get("pid"), int) and old["pid"] != os.getpid():
            self.reclaimed_pid = old["pid"]
        record = {
            "pid": os.getpid(),
            "pid_start": process_start_ticks(os.getpid()),
            "host": socket.gethostname(),
            "aidd_version": __version__,
            "started_at": started.isoformat(timespec="seconds"),
            "argv": list(argv),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record) + "\n").encode(), 0)

    def release(self) -> None:
        if self.fd < 0:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self.fd)
        self.fd = -1
