"""Single-instance lock on `.automaker/aidd.lock` (SUP-80): flock held for the whole run."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from aidd import __version__
from aidd.errors import LockHeldError


def process_start_ticks(pid: int) -> int | None:
    """Start time of `pid` in clock ticks since boot (field 22 of /proc/PID/stat), to tell a
    reused pid apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else None


def read_lock(path: Path) -> dict[str, Any]:
    """The lock file's JSON (its first line), or {} when it is missing or unreadable."""
    try:
        data = json.loads(path.read_bytes().split(b"\n", 1)[0])
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def holder_running(pid: int, info: dict[str, Any]) -> bool | None:
    """Is `pid` still the aidd that wrote `info`? None when it ran on another host."""
    host = info.get("host")
    if isinstance(host, str) and host and host != os.uname().nodename:
        return None
    ticks = process_start_ticks(pid)
    if ticks is not None:
        recorded = info.get("pid_start")
        # A pid reused by another process has another start time.
        return not isinstance(recorded, int) or recorded == ticks
    if Path("/proc/self/stat").exists():
        return False  # /proc works and has no such pid
    return _signal_zero(pid)


def _signal_zero(pid: int) -> bool:
    """Without /proc (macOS): does any process have this pid?"""
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except OSError:
        return False
    return True


@dataclass
class ProjectLock:
    path: Path
    fd: int = -1
    reclaimed_pid: int | None = None
    previous: dict[str, Any] = field(default_factory=dict)  # a dead holder's record

    def acquire(self, started: datetime, argv: tuple[str, ...],
                extra: Mapping[str, object] | None = None) -> None:
        """Take the lock or raise LockHeldError; `extra` joins the record (e.g. the agents'
        mark, REL-1)."""
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
            self.previous = old
        record = {
            "pid": os.getpid(),
            "pid_start": process_start_ticks(os.getpid()),
            "host": os.uname().nodename,
            "aidd_version": __version__,
            "started_at": started.isoformat(timespec="seconds"),
            "argv": list(argv),
            **(extra or {}),
        }
        data = (json.dumps(record) + "\n").encode()
        # Written in place (a rename would break the flock). Overwrite first, then cut: a kill in
        # between leaves the whole new record as the first line, which is all readers parse.
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))

    def release(self) -> None:
        if self.fd < 0:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self.fd)
        self.fd = -1
