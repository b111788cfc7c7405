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
from pathlib import Path

import psutil

from aidd.clock import Clock

_PROC = Path("/proc")
_PR_SET_CHILD_SUBREAPER = 36
_POLL_S = 0.05
_AFTER_KILL_S = 1.0
_FREEZE_ROUNDS = 20  # snapshots per freeze; a fork loop is caught in two or three
_KILL_ROUNDS = 10  # freeze-and-SIGKILL rounds until a fresh snapshot is empty

Scan = Callable[[], list[psutil.Process]]


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
    procs: tuple[ProcInfo, ...]  # every process signalled, in the order found
    escalated: bool  # SIGKILL was needed


class TreeScope:
    """Remembers aidd's children before the agent starts, so children adopted later (through
    the subreaper) are known to come from the agent's tree. `marked` names the processes that
    carry the attempt's mark (aidd.session.orphans), wherever they went."""

    def __init__(self, marked: Callable[[], Iterable[int]] = tuple) -> None:
        self._me = psutil.Process()
        self._before = {child.pid for child in self._me.children()}
        self._marked = marked
        self._procs: dict[tuple[int, float], psutil.Process] = {}  # by (pid, start time)

    def snapshot(self, root_pid: int) -> list[psutil.Process]:
        """The agent, its process group and session, adopted orphans, marked processes, and
        the descendants of all of them. One pass over the process table."""
        table = _table()
        me = self._me.pid
        seeds = {pid for pid, row in table.items()
                 if root_pid in (row.group, row.session)
                 or (row.ppid == me and pid not in self._before)}
        seeds.update(self._marked())
        seeds.add(root_pid)
        members = _with_descendants(seeds, table) - {me, 0, 1}
        # Zombies are already dead (adopted ones are reaped here); the root is its owner's.
        for pid in [pid for pid in members if pid != root_pid and table[pid].zombie]:
            _reap_one(pid)
            members.discard(pid)
        return [p for p in (self._process(pid, table[pid]) for pid in sorted(members))
                if p is not None]

    def _process(self, pid: int, row: _Row) -> psutil.Process | None:
        """One psutil object per process (making one reads /proc again)."""
        key = (pid, row.start)
        proc = self._procs.get(key)
        if proc is None and (proc := _process(pid)) is not None:
            self._procs[key] = proc
        return proc


@dataclass(frozen=True)
class _Row:
    ppid: int
    group: int
    session: int
    zombie: bool
    start: float  # start time (ticks, or seconds): a reused pid is another process


def _table() -> dict[int, _Row]:
    """Every process, from one read of /proc/PID/stat each (through psutil it costs several
    times that, and a storm kill takes several snapshots of a thousand processes); elsewhere
    through psutil."""
    if not _PROC.is_dir():
        return _table_portable()
    table = {}
    for entry in _PROC.iterdir():
        if entry.name.isdigit() and (row := _stat_row(entry / "stat")) is not None:
            table[int(entry.name)] = row
    return table


def _stat_row(path: Path) -> _Row | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # gone
        return None
    try:
        stat = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    fields = stat[stat.rfind(b")") + 2 :].split()  # after the name: state ppid pgrp session
    if len(fields) < 20:
        return None
    zombie = fields[0] in (b"Z", b"X")
    return _Row(int(fields[1]), int(fields[2]), int(fields[3]), zombie, float(fields[19]))


def _table_portable() -> dict[int, _Row]:
    table = {}
    for proc in psutil.process_iter(["ppid", "status", "create_time"]):
        try:
            group, session = os.getpgid(proc.pid), os.getsid(proc.pid)
        except OSError:
            continue
        info = proc.info
        table[proc.pid] = _Row(info.get("ppid") or 0, group, session,
                               info.get("status") == psutil.STATUS_ZOMBIE,
                               info.get("create_time") or 0.0)
    return table


def _with_descendants(seeds: set[int], table: dict[int, _Row]) -> set[int]:
    """`seeds` that exist, and their descendants."""
    children: dict[int, list[int]] = {}
    for pid, row in table.items():
        children.setdefault(row.ppid, []).append(pid)
    found: set[int] = set()
    todo = [pid for pid in seeds if pid in table]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return found


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except (psutil.Error, ValueError):
        return None


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
    scan: Scan,
    *,
    root_pid: int,
    root_alive: Callable[[], bool],
    grace_s: float,
    clock: Clock,
    pump: Callable[[float], object],
    hurry: Callable[[], bool],
) -> KillReport:
    """Freeze what `scan` finds, SIGTERM it and let it run for up to `grace_s` (calling `pump`
    meanwhile), then freeze and SIGKILL whatever a fresh scan finds until one finds nothing.

    A stopped process cannot fork, so a fork loop cannot outrun the kill, and what a dying
    process forks is found by the next scan (issue 13 item 5). The root (the agent) is reaped
    by its owner, so `root_alive` reports on it; every other member that became aidd's child
    is reaped here.
    """
    named: dict[int, ProcInfo] = {}
    procs = _freeze(scan, named)
    if not procs:
        return KillReport((), escalated=False)
    if not (hurry() or grace_s <= 0):
        _send(procs, signal.SIGTERM)  # held while stopped, handled on SIGCONT
        _send(procs, signal.SIGCONT)
        _wait(procs, root_pid, root_alive, grace_s, clock, pump, hurry)
    escalated = _kill_until_gone(scan, named, root_pid, root_alive, clock, pump)
    return KillReport(tuple(named.values()), escalated)


def _freeze(scan: Scan, named: dict[int, ProcInfo]) -> list[psutil.Process]:
    """SIGSTOP every member, again until a fresh scan finds no new one (bounded)."""
    frozen: dict[int, psutil.Process] = {}
    for _ in range(_FREEZE_ROUNDS):
        new = [p for p in scan() if p.pid not in frozen]
        if not new:
            break
        _send(new, signal.SIGSTOP)
        frozen.update((p.pid, p) for p in new)
        _name(new, named)
    return list(frozen.values())


def _name(procs: list[psutil.Process], named: dict[int, ProcInfo]) -> None:
    """Add the processes not named yet to `named`, in the order found."""
    for info in describe(p for p in procs if p.pid not in named):
        named[info.pid] = info


def _kill_until_gone(scan: Scan, named: dict[int, ProcInfo], root_pid: int,
                     root_alive: Callable[[], bool], clock: Clock,
                     pump: Callable[[float], object]) -> bool:
    """SIGSTOP then SIGKILL what a fresh scan finds, until one finds none not yet killed
    (bounded); True when any was killed. What forks between a scan and its SIGSTOP is found by
    the next scan; one that outlives SIGKILL (another user's, stuck in the kernel) is not
    waited for again."""
    killed: set[psutil.Process] = set()  # equal: same pid and start time
    for _ in range(_KILL_ROUNDS):
        procs = [p for p in scan() if p not in killed]
        if not procs:
            break
        killed.update(procs)
        _send(procs, signal.SIGSTOP)
        _name(procs, named)  # while they can still be read
        _send(procs, signal.SIGKILL)
        _wait(procs, root_pid, root_alive, _AFTER_KILL_S, clock, pump, lambda: False)
        _reap(procs, root_pid)
    return bool(killed)


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
) -> None:
    """Until every member is gone, `limit_s` passed or `hurry()`. A dead process stays dead,
    so each one is looked at until it is found gone, not on every tick."""
    deadline = clock.monotonic() + limit_s
    waiting = list(procs)
    while True:
        while waiting and not _member_alive(waiting[-1], root_pid, root_alive):
            waiting.pop()
        left = deadline - clock.monotonic()
        if not waiting or left <= 0 or hurry():
            return
        pump(min(_POLL_S, left))


def _member_alive(proc: psutil.Process, root_pid: int, root_alive: Callable[[], bool]) -> bool:
    return root_alive() if proc.pid == root_pid else _running(proc)


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
