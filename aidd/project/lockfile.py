"""Single-instance lock on `.automaker/aidd.lock` (SUP-80): flock held for the whole run.

The file is project content, so a planted one is never trusted: it is opened without following
a link and must be a plain file (fsio.open_file), and its record only leads to reaping when it
names an aidd that is really gone and that ran on this very directory (a copied project carries
the record of a live run elsewhere, issue 13 item 4).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from aidd import __version__
from aidd.errors import LockHeldError
from aidd.fsio import open_file, read_file
from aidd.fsio import unlink as unlink_in

_RECORD_LIMIT = 64 * 1024
_RACE_RETRIES = 20


class Liveness(Protocol):
    """What the lock asks about processes (aidd.session.procfs answers: on-disk state reads
    no process table). A pid and its start time name one process for good."""

    def start_ticks(self, pid: int) -> int | None:
        """When `pid` started, in clock ticks since boot; None when that cannot be told."""
        ...

    def same_process(self, pid: int, started: object) -> bool:
        """Does `pid` still name the process that started at `started` ticks?"""
        ...


def project_identity(root: Path) -> dict[str, Any]:
    """What names this project directory even after a copy or a rename of a parent: its real
    path, device and inode."""
    info = root.stat()
    return {"dir": os.path.realpath(root), "dev": info.st_dev, "ino": info.st_ino}


def read_lock(root: Path, path: Path) -> dict[str, Any]:
    """The lock file's JSON (its first line), or {} when it is missing, unreadable, odd (a
    FIFO, a link out of the project) or not a record."""
    try:
        raw = read_file(root, path, _RECORD_LIMIT)
        data = json.loads(raw.split(b"\n", 1)[0])
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


class HolderState(Enum):
    NONE = "none"  # no record, or one naming no pid: nobody to ask about
    ALIVE = "alive"  # this host, and the pid still names the aidd that wrote the record
    GONE = "gone"  # this host, and no such process any more (or its pid now names another)
    OTHER_HOST = "other_host"  # written on another host, whose processes cannot be seen


class Holder(NamedTuple):
    """Who a lock record names, and whether it lives: the one answer every reader uses
    (docs/architecture.md "Owners")."""

    state: HolderState
    pid: int | None = None
    host: str | None = None
    started_at: str | None = None

    @property
    def alive(self) -> bool:
        """May it be running? A holder on another host counts as alive: aidd cannot see its
        processes, so it is never reaped or reported gone (docs/architecture.md)."""
        return self.state in (HolderState.ALIVE, HolderState.OTHER_HOST)


def judge_holder(info: Mapping[str, Any], liveness: Liveness) -> Holder:
    """The holder the record `info` names: a positive int pid (a forged `true` or `-1` names
    none); on this host, alive when that pid still names the process that started at the
    recorded start ticks (a reused pid is another process; a record without start ticks
    cannot name a live aidd where they can be read)."""
    pid, host, started = info.get("pid"), info.get("host"), info.get("started_at")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return Holder(HolderState.NONE)
    host = host if isinstance(host, str) and host else None
    if host is not None and host != os.uname().nodename:
        state = HolderState.OTHER_HOST
    else:
        alive = liveness.same_process(pid, info.get("pid_start"))
        state = HolderState.ALIVE if alive else HolderState.GONE
    return Holder(state, pid, host, started if isinstance(started, str) else None)


def lock_holder(root: Path, path: Path, liveness: Liveness) -> Holder:
    """The holder of the lock file `path`, read never taken (`--status`, `--doctor`, `--stop`,
    the report, the fleet)."""
    return judge_holder(read_lock(root, path), liveness)


@dataclass
class ProjectLock:
    root: Path
    path: Path
    liveness: Liveness
    fd: int = -1
    previous: dict[str, Any] = field(default_factory=dict)  # the record found when taken

    def acquire(self, started: datetime, argv: tuple[str, ...],
                extra: Mapping[str, object] | None = None) -> None:
        """Take the lock or raise LockHeldError (UnsafePathError for a planted link or odd
        file); `extra` joins the record (e.g. the agents' mark, REL-1)."""
        self.fd = self._flocked()
        self.previous = read_lock(self.root, self.path)
        record = {
            "pid": os.getpid(),
            "pid_start": self.liveness.start_ticks(os.getpid()),
            "host": os.uname().nodename,
            "project": project_identity(self.root),
            "aidd_version": __version__,
            "started_at": started.isoformat(timespec="seconds"),
            "argv": list(argv),
            **(extra or {}),
        }
        data = (json.dumps(record) + "\n").encode()
        # Written in place (a rename would break the flock). Overwrite first, then cut: a kill in
        # between leaves the whole new record as the first line, which is all readers parse.
        os.pwrite(self.fd, data, 0)
        os.ftruncate(self.fd, len(data))

    def _flocked(self) -> int:
        """An fd on the lock file with the flock held. A releasing aidd unlinks the file, so the
        file we locked may no longer be the one at the path: then try again (issue 13 item 11)."""
        for _ in range(_RACE_RETRIES):
            fd = open_file(self.root, self.path, os.O_RDWR | os.O_CREAT)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                info = read_lock(self.root, self.path)
                raise LockHeldError(
                    f"another aidd (pid {info.get('pid', '?')}, started "
                    f"{info.get('started_at', '?')}) is running on {self.root}"
                ) from None
            if self._is_current(fd):
                self._refuse_live_holder(fd)
                return fd
            os.close(fd)
        raise LockHeldError(f"{self.path} keeps changing under aidd; is another aidd starting?")

    def _refuse_live_holder(self, fd: int) -> None:
        """A live aidd of this very project whose lock file was replaced under it (by its agent,
        say) still runs here: a second one would be two supervisors on one project (REL-7)."""
        info = read_lock(self.root, self.path)
        holder = judge_holder(info, self.liveness)
        if (holder.alive and holder.pid != os.getpid()
                and info.get("project") == project_identity(self.root)):
            os.close(fd)
            raise LockHeldError(f"another aidd (pid {holder.pid}, started "
                                f"{holder.started_at or '?'}) is running on {self.root} (its lock "
                                "file was replaced)")

    def _is_current(self, fd: int) -> bool:
        try:
            now = self.path.lstat()
        except OSError:
            return False
        mine = os.fstat(fd)
        return (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino)

    def previous_holder_gone(self) -> int | None:
        """The pid of the aidd whose record we found, when it is really gone and ran on this
        very project directory: only then may its marked processes be reaped. None otherwise
        (no record, our own, alive, another host, or another directory's record)."""
        holder = judge_holder(self.previous, self.liveness)
        if holder.state is not HolderState.GONE or holder.pid == os.getpid():
            return None
        if not isinstance(self.previous.get("pid_start"), int):
            return None  # nothing to prove the pid was that aidd
        return holder.pid if self.previous.get("project") == project_identity(self.root) else None

    def release(self) -> None:
        if self.fd < 0:
            return
        # Unlink only our own file: never a lock another aidd created after a race.
        if self._is_current(self.fd):
            with contextlib.suppress(OSError):
                unlink_in(self.root, self.path)
        os.close(self.fd)
        self.fd = -1
