"""The agent's process tree: find every member, kill them all, name them (SUP-40..43).

The only module that imports psutil.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

import psutil

from aidd.clock import Clock

_PR_SET_CHILD_SUBREAPER = 36
_POLL_S = 0.05
_AFTER_KILL_S = 1.0


@cache
def enable_subreaper() -> bool:
    """Linux: orphaned descendants (double fork, setsid) are re-parented to aidd (SUP-41)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    name: str
    cmd: str  # the start of the command line

    def label(self) -> str:
        return f"{self.pid} {self.name}"


@dataclass(frozen=True)
class KillReport:
    procs: tuple[ProcInfo, ...]
    escalated: bool  # SIGKILL was needed


class TreeScope:
    """Remembers aidd's children before the agent starts, so children adopted later (through
    the subreaper) are known to come from the agent's tree."""

    def __init__(self) -> None:
        self._me = psutil.Process()
        self._before = {child.pid for child in self._children()}

    def snapshot(self, root_pid: int) -> list[psutil.Process]:
        """The agent, its descendants, its process group and session, and adopted orphans."""
        found: dict[int, psutil.Process] = {}
        root = _process(root_pid)
        if root is not None:
            _add(found, [root])
        _add(found, (p for p in psutil.process_iter() if _in_group(p.pid, root_pid)))
        _add(found, (c for c in self._children() if c.pid not in self._before))
        for pid in (self._me.pid, 0, 1):
            found.pop(pid, None)
        # Zombies are already dead (adopted ones are reaped here); the root is its owner's.
        members = [p for pid, p in found.items() if pid == root_pid or _running(p)]
        return sorted(members, key=lambda p: p.pid)

    def _children(self) -> list[psutil.Process]:
        try:
            return self._me.children()
        except psutil.Error:
            return []


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except (psutil.Error, ValueError):
        return None


def _add(found: dict[int, psutil.Process], procs: Iterable[psutil.Process]) -> None:
    for proc in procs:
        found.setdefault(proc.pid, proc)
        with contextlib.suppress(psutil.Error):
            for child in proc.children(recursive=True):
                found.setdefault(child.pid, child)


def _in_group(pid: int, root_pid: int) -> bool:
    try:
        return os.getpgid(pid) == root_pid or os.getsid(pid) == root_pid
    except OSError:
        return False


def describe(procs: Iterable[psutil.Process]) -> tuple[ProcInfo, ...]:
    out = []
    for proc in procs:
        try:
            name = proc.name()
            cmd = " ".join(proc.cmdline())[:120]
        except psutil.Error:
            name, cmd = "?", ""
        out.append(ProcInfo(proc.pid, name, cmd))
    return tuple(out)


def terminate(
    procs: list[psutil.Process],
    *,
    root_pid: int,
    root_alive: Callable[[], bool],
    grace_s: float,
    clock: Clock,
    pump: Callable[[float], object],
    hurry: Callable[[], bool],
) -> KillReport:
    """SIGTERM all, wait up to `grace_s` (calling `pump` meanwhile), SIGKILL survivors, reap.

    The root (the agent) is reaped by its owner, so `root_alive` reports on it; every other
    member that became aidd's child is reaped here.
    """
    info = describe(procs)
    if not procs:
        return KillReport(info, escalated=False)
    urgent = hurry() or grace_s <= 0
    _send(procs, signal.SIGKILL if urgent else signal.SIGTERM)
    alive = _wait(procs, root_pid, root_alive, grace_s, clock, pump, hurry)
    escalated = urgent
    if alive:
        escalated = True
        _send(alive, signal.SIGKILL)
        _wait(alive, root_pid, root_alive, _AFTER_KILL_S, clock, pump, lambda: False)
    _reap(procs, root_pid)
    return KillReport(info, escalated)


def _send(procs: Iterable[psutil.Process], sig: signal.Signals) -> None:
    me = os.getpid()
    for proc in procs:
        if proc.pid == me:
            continue
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            proc.send_signal(sig)


def _wait(
    procs: list[psutil.Process],
    root_pid: int,
    root_alive: Callable[[], bool],
    limit_s: float,
    clock: Clock,
    pump: Callable[[float], object],
    hurry: Callable[[], bool],
) -> list[psutil.Process]:
    deadline = clock.monotonic() + limit_s
    while True:
        alive = [p for p in procs if (root_alive() if p.pid == root_pid else _running(p))]
        left = deadline - clock.monotonic()
        if not alive or left <= 0 or hurry():
            return alive
        pump(min(_POLL_S, left))


def _running(proc: psutil.Process) -> bool:
    """Alive and not a zombie; a zombie child of aidd is reaped on the way."""
    try:
        if proc.status() != psutil.STATUS_ZOMBIE:
            return True
    except psutil.Error:
        return False
    _reap_one(proc.pid)
    return False


def _reap(procs: Iterable[psutil.Process], root_pid: int) -> None:
    for proc in procs:
        if proc.pid != root_pid:
            _reap_one(proc.pid)


def _reap_one(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def still_running(procs: Iterable[ProcInfo]) -> list[ProcInfo]:
    """Members of an earlier snapshot that are still running (for tests and checks)."""
    out = []
    for info in procs:
        proc = _process(info.pid)
        if proc is not None and _running(proc):
            out.append(info)
    return out
