"""Sets of processes, found and killed: an agent's tree or whatever carries a mark, with the one
kill loop for both (SUP-40..43, REL-1); facts from /proc come through aidd.session.procfs. The
only importer of psutil, where a kill uses it (8 ms and a /proc/stat read at import, issue 33)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, NamedTuple, TypeAlias, cast

from aidd import spawning
from aidd.clock import Clock
from aidd.session import procfs

if TYPE_CHECKING:
    import psutil

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_POLL_S = 0.05
_AFTER_KILL_S = 1.0
_FREEZE_ROUNDS = 20  # snapshots per freeze; a fork loop is caught in two or three
_KILL_ROUNDS = 10  # freeze-and-SIGKILL rounds until a fresh snapshot is empty

Scan: TypeAlias = "Callable[[], list[psutil.Process]]"
Marked = Callable[[Collection[int] | None], Iterable[int]]  # the marked among these (or all)


@cache
def _prctl() -> Callable[..., int] | None:
    """libc's prctl (Linux), looked up once: never in a forked child, where the dynamic
    loader's lock may be held by a thread that no longer exists."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return cast("Callable[..., int]", ctypes.CDLL(None, use_errno=True).prctl)
    except (OSError, AttributeError):
        return None


@cache
def enable_subreaper() -> bool:
    """Linux: orphaned descendants (double fork, setsid) are re-parented to aidd (SUP-41)."""
    prctl = _prctl()
    return prctl is not None and prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def dies_with_me(sig: signal.Signals) -> Callable[[], None] | None:
    """A `preexec_fn` (Linux; else None) by which the child gets `sig` when this process's
    calling thread dies (PR_SET_PDEATHSIG): spawn from a thread that lives as long as the
    process (its main thread, an event loop's). A child whose parent died before the call
    exits at once, since nobody would signal it then."""
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def setup() -> None:
        prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(128 + sig)

    return setup


class ProcInfo(NamedTuple):
    pid: int
    name: str
    cmd: str  # the start of the command line

    def label(self) -> str:
        return f"{self.pid} {self.name}"


class KillReport(NamedTuple):
    procs: tuple[ProcInfo, ...]  # every process signalled, in the order found
    escalated: bool  # SIGKILL was needed


class Root(NamedTuple):
    """The agent itself: its owner (the pty) reaps it, so only the owner can tell it exited."""

    pid: int
    alive: Callable[[], bool]


# -- finding --------------------------------------------------------------------------------
def carrier_scan(name: str, value: str, select: Callable[[procfs.Carrier], bool]) -> Scan:
    """A scan for `terminate`: the processes carrying `name=value` that `select` picks."""
    handles = _Handles()

    def scan() -> list[psutil.Process]:
        found = (handles.get(c.pid, c.start) for c in procfs.find_carrying(name, value)
                 if select(c))
        return [proc for proc in found if proc is not None]

    return scan


class TreeScope:
    """Remembers aidd's children before the agent starts, so children adopted later (through
    the subreaper) are known to come from the agent's tree. `marked(among)` names the
    processes (of `among`, by default all) that carry the attempt's mark
    (aidd.session.orphans), wherever they went; `foreign` the ones that are aidd's own
    children yet not this scope's: with --parallel N, another slot's agent and aidd's own git,
    started on other threads meanwhile."""

    def __init__(self, marked: Marked | None = None,
                 foreign: Callable[[], Iterable[int]] = tuple) -> None:
        self._me = os.getpid()
        self._before = _children_now(self._me)
        self._marked = marked or (lambda among: ())
        # The processes alive now: only one born later can carry the attempt's mark.
        self._alive_before = procfs.recent_pids() if marked is not None else frozenset()
        self._foreign = foreign
        self._handles = _Handles()

    def snapshot(self, root_pid: int) -> list[psutil.Process]:
        """The agent, its process group and session, adopted orphans, marked processes, and
        the descendants of all of them. One pass over the process table."""
        with spawning.LOCK:  # no child of aidd half-started (forked, not yet exec'd)
            table = _table()
            adopted = self._adopted(table)
        seeds = {pid for pid, row in table.items()
                 if root_pid in (row.group, row.session) or pid in adopted}
        seeds.update(self._marked(None))
        seeds.add(root_pid)
        members = _with_descendants(seeds, table) - {self._me, 0, 1}
        # Zombies are already dead (adopted ones are reaped here); the root is its owner's.
        for pid in [pid for pid in members if pid != root_pid and table[pid].zombie]:
            _reap_zombie(pid)
            members.discard(pid)
        found = (self._handles.get(pid, table[pid].start) for pid in sorted(members))
        return [proc for proc in found if proc is not None]

    def surely_empty(self) -> bool:
        """Once the agent is reaped: is nothing of its tree left? Known without the process
        table (issue 33) when aidd is the subreaper and the kernel lists children: every
        living descendant of the agent is then aidd's child or below one (an orphan goes to
        its nearest subreaper ancestor: aidd, or a descendant that is one, itself below aidd;
        setsid and double forks included), so with no new child of aidd there is none; and
        among the processes born since the scope began none carries the attempt's mark (one
        that never was in the tree: started by a daemon that keeps its requester's
        environment, as atd does). False means: look with `snapshot`. Another slot's agent or
        git run is a new child too, so --parallel N often takes the full look."""
        if not (enable_subreaper() and procfs.children_known()):
            return False
        if any(self._is_new(pid, procfs.start_ticks(pid)) and not spawning.is_own(pid)
               for pid in procfs.children(self._me)):
            return False
        born = procfs.pids() - self._alive_before
        return not born or not any(True for _ in self._marked(born))

    def cpu_s(self, root_pid: int) -> float | None:
        """CPU seconds used so far by the agent's tree: its descendants and the orphans
        adopted since it started; None where /proc cannot list children (issue 17)."""
        if not procfs.children_known():
            return None
        with spawning.LOCK:
            children = procfs.children(self._me)
            own = spawning.owned(children)
            new = [pid for pid in children if pid not in self._before and pid not in own]
            foreign = set(self._foreign()) if new else set()
        return procfs.tree_cpu_s([root_pid, *(pid for pid in new if pid not in foreign)])

    def _adopted(self, table: dict[int, procfs.Row]) -> set[int]:
        """aidd's children since the scope began, but those aidd started and the foreign
        ones (under spawning.LOCK, with `table` read under it)."""
        children = {pid for pid, row in table.items() if row.ppid == self._me}
        own = spawning.owned(children)
        new = {pid for pid in children - own if self._is_new(pid, table[pid].start)}
        return new - set(self._foreign()) if new else new

    def _is_new(self, pid: int, start: float | None) -> bool:
        """Not a child aidd had when the scope began: by pid and start time (a pid reused since
        is a new process). One gone already (`start` None) is nothing to look for."""
        return start is not None and self._before.get(pid, -1.0) != start


class _Handles:
    """One psutil object per process, by pid and start time (making one reads /proc again)."""

    def __init__(self) -> None:
        self._known: dict[tuple[int, float], psutil.Process] = {}

    def get(self, pid: int, start: float) -> psutil.Process | None:
        key = (pid, start)
        proc = self._known.get(key)
        if proc is None:
            import psutil
            try:
                proc = self._known[key] = psutil.Process(pid)
            except (psutil.Error, ValueError):
                return None
        return proc


def _children_now(pid: int) -> dict[int, float | None]:
    """`pid`'s children and their start times: from its tasks' children lists where the kernel
    keeps them (a few reads at every attempt's start, issue 33), else from a pass over the
    process table."""
    if procfs.children_known():
        return {child: procfs.start_ticks(child) for child in procfs.children(pid)}
    return {child: row.start for child, row in _table().items() if row.ppid == pid}


def _table() -> dict[int, procfs.Row]:
    """Every process: from /proc, one read per process (a storm kill takes several snapshots of
    a thousand processes); elsewhere through psutil."""
    return procfs.table() if procfs.available() else _table_portable()


def _table_portable() -> dict[int, procfs.Row]:
    import psutil
    table = {}
    for proc in psutil.process_iter(["ppid", "status", "create_time"]):
        try:
            group, session = os.getpgid(proc.pid), os.getsid(proc.pid)
        except OSError:
            continue
        info = proc.info
        zombie = info.get("status") == psutil.STATUS_ZOMBIE
        table[proc.pid] = procfs.Row(info.get("ppid") or 0, group, session, zombie,
                                     info.get("create_time") or 0.0)
    return table


def _with_descendants(seeds: set[int], table: dict[int, procfs.Row]) -> set[int]:
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


def describe(procs: Iterable[psutil.Process]) -> tuple[ProcInfo, ...]:
    import psutil
    out = []
    for proc in procs:
        try:
            name = proc.name()
            cmd = " ".join(proc.cmdline())[:120]
        except psutil.Error:
            name, cmd = "?", ""
        out.append(ProcInfo(proc.pid, name, cmd))
    return tuple(out)


def listed(infos: Sequence[ProcInfo], label: Callable[[ProcInfo], str], most: int = 10) -> str:
    """The first `most` labels, then how many more (a fork loop leaves hundreds)."""
    named = ", ".join(label(i) for i in infos[:most])
    return named + (f" and {len(infos) - most} more" if len(infos) > most else "")


# -- killing --------------------------------------------------------------------------------
def terminate(scan: Scan, *, grace_s: float, clock: Clock, root: Root | None = None,
              pump: Callable[[float], object] | None = None,
              hurry: Callable[[], bool] = lambda: False) -> KillReport:
    """Freeze what `scan` finds, SIGTERM it and let it run for up to `grace_s` (calling `pump`,
    by default `clock.sleep`, meanwhile), then freeze and SIGKILL whatever a fresh scan finds
    until one finds nothing. `hurry()` cuts the grace short.

    A stopped process cannot fork, so a fork loop cannot outrun the kill, and what a dying
    process forks is found by the next scan (issue 13 item 5). Every member that became aidd's
    child is reaped here, except the `root`, which its owner reaps.
    """
    return _Kill(scan, root, clock, pump or clock.sleep, hurry).run(grace_s)


@dataclass
class _Kill:
    scan: Scan
    root: Root | None
    clock: Clock
    pump: Callable[[float], object]
    hurry: Callable[[], bool]
    named: dict[int, ProcInfo] = field(default_factory=dict)  # in the order found

    def run(self, grace_s: float) -> KillReport:
        # Without a grace the kill rounds alone do: each freezes what it found before SIGKILL.
        if not (self.hurry() or grace_s <= 0):
            procs = self._freeze()
            if not procs:
                return KillReport((), escalated=False)
            _send(procs, signal.SIGTERM)  # held while stopped, handled on SIGCONT
            _send(procs, signal.SIGCONT)
            self._wait(procs, grace_s, self.hurry)
        escalated = self._kill_until_gone()
        return KillReport(tuple(self.named.values()), escalated)

    def _freeze(self) -> list[psutil.Process]:
        """SIGSTOP every member, again until a fresh scan finds no new one (bounded)."""
        seen: set[int] = set()
        frozen: list[psutil.Process] = []
        for _ in range(_FREEZE_ROUNDS):
            new = [p for p in self.scan() if p.pid not in seen]
            if not new:
                break
            seen.update(p.pid for p in new)
            stopped = _send(new, signal.SIGSTOP)
            frozen.extend(stopped)
            self._name(stopped)
        return frozen

    def _kill_until_gone(self) -> bool:
        """SIGSTOP then SIGKILL what a fresh scan finds, until one finds none not yet killed
        (bounded); True when any got SIGKILL. What forks between a scan and its SIGSTOP is found
        by the next scan; one that outlives SIGKILL (another user's, stuck in the kernel) is
        not waited for again."""
        found: set[psutil.Process] = set()  # equal: same pid and start time
        escalated = False
        for _ in range(_KILL_ROUNDS):
            procs = [p for p in self.scan() if p not in found]
            if not procs:
                break
            found.update(procs)
            stopped = _send(procs, signal.SIGSTOP)
            self._name(stopped)  # while they can still be read
            escalated |= bool(_send(stopped, signal.SIGKILL))
            self._wait(stopped, _AFTER_KILL_S, lambda: False)
            for proc in stopped:
                if not self._is_root(proc):
                    _reap_zombie(proc.pid)
        return escalated

    def _name(self, procs: list[psutil.Process]) -> None:
        for info in describe(p for p in procs if p.pid not in self.named):
            self.named[info.pid] = info

    def _wait(self, procs: list[psutil.Process], limit_s: float,
              hurry: Callable[[], bool]) -> None:
        """Until every one is gone, `limit_s` passed or `hurry()`. A dead process stays dead,
        so each one is looked at until it is found gone, not on every tick."""
        deadline = self.clock.monotonic() + limit_s
        waiting = list(procs)
        while True:
            while waiting and not self._alive(waiting[-1]):
                waiting.pop()
            left = deadline - self.clock.monotonic()
            if not waiting or left <= 0 or hurry():
                return
            self.pump(min(_POLL_S, left))

    def _is_root(self, proc: psutil.Process) -> bool:
        return self.root is not None and proc.pid == self.root.pid

    def _alive(self, proc: psutil.Process) -> bool:
        """Alive and not a zombie; a zombie child of aidd other than the root is reaped on the
        way."""
        root = self.root
        if root is not None and proc.pid == root.pid:
            return root.alive()
        import psutil
        try:
            if proc.status() != psutil.STATUS_ZOMBIE:
                return True
        except psutil.Error:
            return False
        _reap_zombie(proc.pid)
        return False


def _send(procs: Iterable[psutil.Process], sig: signal.Signals) -> list[psutil.Process]:
    """Signal each (never aidd itself); returns those still there. psutil checks each one's
    start time first, so a pid reused since the scan is never signalled."""
    import psutil
    me = os.getpid()
    there = []
    for proc in procs:
        if proc.pid == me:
            continue
        try:
            proc.send_signal(sig)
        except psutil.NoSuchProcess:
            continue
        except psutil.AccessDenied:
            pass
        there.append(proc)
    return there


def _reap_zombie(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)
