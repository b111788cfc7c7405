"""Process facts read straight from /proc (Linux): the table, start times, environments.

No psutil here: one read per file took 2-2.5 times less than psutil for the table and the mark
scan a storm kill repeats, and `--status`/`--stop` ask about the lock's holder without psutil's
import time (about 20 ms). Killing, and everything else, is aidd.session.proctree's."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import NamedTuple

_PROC = Path("/proc")
_CHUNK = 1 << 16
_RECENT_S = 1.0  # how old a listing of every pid `recent_pids` hands out
_latest: tuple[float, frozenset[int]] = (-math.inf, frozenset())  # pids()'s last: when, what


def available() -> bool:
    return _PROC.is_dir()


class Row(NamedTuple):
    """One process's line of /proc/PID/stat."""

    ppid: int
    group: int
    session: int
    zombie: bool
    start: float  # start time (ticks, or seconds): a reused pid is another process


def table() -> dict[int, Row]:
    """Every process, by pid; empty without /proc."""
    out = {}
    if available():
        for entry in _PROC.iterdir():
            if entry.name.isdigit() and (row := _stat_row(entry / "stat")) is not None:
                out[int(entry.name)] = row
    return out


def boot_time() -> float | None:
    """When this machine booted, in Unix seconds (`btime` of /proc/stat); None without /proc."""
    raw = _read(_PROC / "stat")
    for line in (raw or b"").splitlines():
        if line.startswith(b"btime "):
            try:
                return float(line.split()[1])
            except (IndexError, ValueError):
                return None
    return None


def start_ticks(pid: int) -> int | None:
    """When `pid` started, in clock ticks since boot: a pid reused by another process has
    another start time. None when there is no such process, or no /proc to ask."""
    row = _stat_row(_PROC / str(pid) / "stat")
    return None if row is None else int(row.start)


def running(pid: int, started: object) -> bool:
    """`pid` is the process that started at `started` ticks, and not a zombie (a killed
    child its parent has not reaped yet is gone for any use but `wait`)."""
    row = _stat_row(_PROC / str(pid) / "stat")
    return row is not None and row.start == started and not row.zombie


def same_process(pid: int, started: object) -> bool:
    """Does `pid` still name the process that started at `started` ticks (a zombie does)?
    Without /proc, where no start time can be known: does any process have that pid."""
    ticks = start_ticks(pid)
    if ticks is not None:
        return started == ticks
    return False if available() else _pid_exists(pid)


class Carrier(NamedTuple):
    """A process whose environment holds the entry looked for."""

    pid: int
    start: float
    environ: Mapping[str, str]


def pids() -> set[int]:
    """The pids of every process now (one read of /proc's directory); empty without /proc."""
    global _latest
    try:
        names = os.listdir(_PROC)  # noqa: PTH208 -- names, no Path each: half iterdir's time
    except OSError:
        return set()
    found = {int(name) for name in names if name.isdigit()}
    _latest = (time.monotonic(), frozenset(found))
    return found


def recent_pids() -> frozenset[int]:
    """The pids of every process at most `_RECENT_S` ago: the last `pids()`, from any thread
    (an attempt's end listed them; the next attempt starts a few ms later: issue 33), else
    listed now. A process alive now but not in it was born since, unless its pid was used
    again meanwhile, which takes a lap of the kernel's pid counter."""
    at, found = _latest
    if time.monotonic() - at <= _RECENT_S:
        return found
    return frozenset(pids())


def find_carrying(name: str, value: str, among: Iterable[int] | None = None) -> list[Carrier]:
    """Every process (of `among`, by default all) but aidd and its ancestors whose environment
    holds `name=value`, by pid; none without /proc or for an empty `value`."""
    if not value or not available():
        return []
    spared: set[int] | None = None  # aidd's ancestors, looked up once one matches
    needle = f"{name}={value}".encode()
    found = []
    for pid in pids() if among is None else among:
        raw = _read(f"{_PROC}/{pid}/environ")
        if raw is None or needle not in raw:  # cheap: most processes never match
            continue
        spared = _ancestors() if spared is None else spared
        if pid in spared:
            continue
        env = _parse_environ(raw)
        row = _stat_row(_PROC / str(pid) / "stat")
        if env.get(name) == value and row is not None:
            found.append(Carrier(pid, row.start, env))
    return sorted(found, key=lambda c: c.pid)


def _stat_fields(path: Path) -> list[bytes]:
    """The fields of /proc/PID/stat after the name (state ppid pgrp session ...); [] when the
    process is gone."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # gone
        return []
    try:
        stat = os.read(fd, 4096)  # one read: the table is read on every snapshot of a storm
    except OSError:
        return []
    finally:
        os.close(fd)
    return stat[stat.rfind(b")") + 2 :].split()


def _stat_row(path: Path) -> Row | None:
    fields = _stat_fields(path)
    if len(fields) < 20:
        return None
    zombie = fields[0] in (b"Z", b"X")
    return Row(int(fields[1]), int(fields[2]), int(fields[3]), zombie, int(fields[19]))


def _ancestors() -> set[int]:
    """aidd and its ancestors: whoever started aidd may carry the mark it is looking for."""
    pids = {0, 1}
    pid = os.getpid()
    while pid not in pids:
        pids.add(pid)
        row = _stat_row(_PROC / str(pid) / "stat")
        pid = row.ppid if row is not None else 0
    return pids


def _read(path: Path | str) -> bytes | None:
    """The whole file; None when it cannot be read (gone, or another user's process). Plain
    os calls, and no read to find the end after a short one (/proc hands a small file over
    whole): a tenth of Path.read_bytes' time (issue 33)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    chunks = []
    try:
        while chunk := os.read(fd, _CHUNK):
            chunks.append(chunk)
            if len(chunk) < _CHUNK:
                break
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks)


def _parse_environ(raw: bytes) -> dict[str, str]:
    env = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            env[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
    return env


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except PermissionError:  # another user's
        return True
    except OSError:
        return False
    return True


# -- CPU of a tree (issue 17: is a silent agent busy?) ---------------------------------------
_TICK_S = 1.0 / (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)
_WALL = 0x40000000  # Linux's __WALL: every child, whatever its exit signal
_TREE_MAX = 4096  # processes walked at most: a fork storm is the kill loop's business


def children(pid: int) -> list[int]:
    """The pids whose parent is `pid` (every thread's), from /proc; [] when not known.
    aidd's own with no read at all when it has none (between two attempts of one agent)."""
    if pid == os.getpid() and _childless():
        return []
    return _children(pid)


def _childless() -> bool:
    """This process has no child, living or a zombie, by one waitid(2) that reaps nothing
    (WNOWAIT), instead of a listing and a read per thread (issue 33). False when it cannot
    tell: no waitid, or a kernel before 4.7 refusing __WALL (children of any exit signal)."""
    waitid = getattr(os, "waitid", None)
    if waitid is None:
        return False
    try:
        waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT | _WALL)
    except ChildProcessError:
        return True
    except OSError:
        return False
    return False


@cache
def children_known() -> bool:
    """Does this kernel list a task's children (CONFIG_PROC_CHILDREN)?"""
    return (_PROC / "self" / "task" / str(os.getpid()) / "children").exists()


def tree_cpu_s(roots: list[int]) -> float:
    """CPU seconds (user and system, with those of reaped children) used so far by `roots`
    and their descendants, walked through /proc/PID/task/TID/children: a few reads per member,
    never the whole process table (aidd samples it every second while the agent is silent)."""
    total = 0
    seen: set[int] = set()
    todo = list(roots)
    while todo and len(seen) < _TREE_MAX:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        fields = _stat_fields(_PROC / str(pid) / "stat")
        if len(fields) < 15:
            continue  # gone
        total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
        todo.extend(_children(pid))
    return total * _TICK_S


def _children(pid: int) -> list[int]:
    tasks = f"{_PROC}/{pid}/task"
    try:
        tids = os.listdir(tasks)  # noqa: PTH208 -- names, no Path each (issue 33)
    except OSError:
        return []
    found: list[int] = []
    for tid in tids:
        raw = _read(f"{tasks}/{tid}/children")
        if raw:
            found.extend(int(c) for c in raw.split())
    return found
