"""Orphans of an aidd that was killed with SIGKILL (REL-1): found by a mark, killed at the next
start.

Each run puts a random mark in the agent's environment (`AIDD_SUPERVISOR_ID`) and in the lock
file. Every descendant inherits it, including double-forked, setsid'd ones that were re-parented
to init when aidd died. The next run that reclaims the stale lock kills every process still
carrying that mark. A reused pid cannot carry it (the environment comes with the process), and
the mark is checked again, with the start time, right before each signal. Linux only (/proc);
elsewhere nothing is reaped.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from aidd.clock import Clock
from aidd.project.lockfile import process_start_ticks

MARK_VAR = "AIDD_SUPERVISOR_ID"
_PROC = Path("/proc")
_POLL_S = 0.05
_EVENTS_TAIL = 256 * 1024


def new_mark() -> str:
    return secrets.token_hex(8)


@dataclass(frozen=True)
class Orphan:
    pid: int
    ticks: int | None
    name: str
    iteration: str | None  # AIDD_ITERATION of its environment: the attempt it belongs to

    def label(self) -> str:
        return f"{self.pid} {self.name}"


def find_marked(mark: str) -> list[Orphan]:
    """Every process (other than aidd and its ancestors) whose environment holds the mark."""
    if not mark or not _PROC.is_dir():
        return []
    spared = _ancestors()
    entry_bytes = f"{MARK_VAR}={mark}".encode()
    found = []
    for entry in _PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) in spared:
            continue
        raw = _read(entry / "environ")
        if raw is None or entry_bytes not in raw:  # cheap: most processes never match
            continue
        env = _parse_environ(raw)
        if env.get(MARK_VAR) == mark:
            pid = int(entry.name)
            found.append(Orphan(pid, process_start_ticks(pid), _name(pid),
                                env.get("AIDD_ITERATION")))
    return sorted(found, key=lambda o: o.pid)


def in_flight_attempts(events_path: Path) -> set[str]:
    """Log numbers whose `iteration_start` has no `iteration_end` (the attempt aidd died in)."""
    started: set[str] = set()
    for event in _tail_events(events_path):
        number = str(event.get("number"))
        if event.get("event") == "iteration_start":
            started.add(number)
        elif event.get("event") == "iteration_end":
            started.discard(number)
    return started


def reap_previous(record: Mapping[str, object], events_path: Path, clock: Clock) -> list[Orphan]:
    """Kill what the run that wrote lock `record` left behind. Under `--keep-children` only the
    tree of the attempt it died in: descendants of finished attempts were kept on purpose."""
    mark = record.get("agent_mark")
    if not isinstance(mark, str) or not mark:
        return []
    in_flight = in_flight_attempts(events_path) if record.get("keep_children") is True else None

    def select(orphan: Orphan) -> bool:
        return in_flight is None or orphan.iteration in in_flight

    reaped = reap([o for o in find_marked(mark) if select(o)], mark, clock)
    # Then what a fork loop started after that look (issue 13 item 5).
    return reaped + sweep(mark, clock, select)


def reap(orphans: Iterable[Orphan], mark: str, clock: Clock, grace_s: float = 1.0) -> list[Orphan]:
    """SIGTERM, wait up to `grace_s`, SIGKILL the rest; returns the processes signalled."""
    targets = [o for o in orphans if _still(o, mark)]
    for orphan in targets:
        _signal(orphan, mark, signal.SIGTERM)
    deadline = clock.monotonic() + grace_s
    while any(_alive(o) for o in targets) and clock.monotonic() < deadline:
        clock.sleep(_POLL_S)
    for orphan in targets:
        if _alive(orphan):
            _signal(orphan, mark, signal.SIGKILL)
    deadline = clock.monotonic() + 1.0
    while any(_alive(o) for o in targets) and clock.monotonic() < deadline:
        clock.sleep(_POLL_S)
    return targets


def sweep(mark: str, clock: Clock, select: Callable[[Orphan], bool] = lambda o: True,
          rounds: int = 10) -> list[Orphan]:
    """SIGSTOP, then SIGKILL, every process carrying `mark` (other than aidd and its
    ancestors) that `select` picks, again until a fresh look finds none (bounded): a stopped
    process cannot fork, so a fork loop cannot outrun it. No grace: this is the safety net
    after the graceful kills. Returns the processes killed."""
    killed: dict[tuple[int, int | None], Orphan] = {}
    for _ in range(rounds):
        found = [o for o in find_marked(mark) if select(o) and (o.pid, o.ticks) not in killed]
        if not found:  # none left, or only what outlived SIGKILL (stuck in the kernel)
            break
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for orphan in found:
                _signal(orphan, mark, sig)
        _wait_gone(found, clock)
        killed.update(((o.pid, o.ticks), o) for o in found)
    return list(killed.values())


def sweep_run(environ: Mapping[str, str], keep_children: bool, clock: Clock) -> list[str]:
    """At run end, the safety net (REL-1): kill what still carries the run's mark, unless
    `--keep-children` kept it on purpose (every kill path swept its own attempt already).
    Returns the warning to show, if any."""
    if keep_children:
        return []
    killed = sweep(environ.get(MARK_VAR, ""), clock)
    if not killed:
        return []
    names = ", ".join(o.label() for o in killed[:10])
    return [f"killed {len(killed)} processes still carrying this run's mark: {names}"]


def _wait_gone(orphans: list[Orphan], clock: Clock, limit_s: float = 1.0) -> None:
    """Until each is dead; zombies left to aidd (the subreaper) are reaped on the way."""
    deadline = clock.monotonic() + limit_s
    while clock.monotonic() < deadline:
        for orphan in orphans:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(orphan.pid, os.WNOHANG)
        if not any(_alive(o) for o in orphans):
            return
        clock.sleep(_POLL_S)


# -- /proc helpers --------------------------------------------------------------------------
def _ancestors() -> set[int]:
    pids = {0, 1}
    pid = os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        pid = _ppid(pid)
    return pids


def _ppid(pid: int) -> int:
    fields = _stat_fields(pid)
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else 0


def _stat_fields(pid: int) -> list[str]:
    """Fields of /proc/PID/stat after the command name: state, ppid, ..."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return stat[stat.rfind(")") + 2 :].split()


def _environ(pid: int) -> dict[str, str] | None:
    raw = _read(_PROC / str(pid) / "environ")
    return None if raw is None else _parse_environ(raw)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:  # gone, or another user's process
        return None


def _parse_environ(raw: bytes) -> dict[str, str]:
    env = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            env[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
    return env


def _name(pid: int) -> str:
    try:
        return (_PROC / str(pid) / "comm").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return "?"


def _still(orphan: Orphan, mark: str) -> bool:
    """The same process as found: same start time, mark still in its environment."""
    if process_start_ticks(orphan.pid) != orphan.ticks:
        return False
    env = _environ(orphan.pid)
    return env is not None and env.get(MARK_VAR) == mark


def _alive(orphan: Orphan) -> bool:
    """Running and still that process (a zombie is dead: only its parent can reap it)."""
    fields = _stat_fields(orphan.pid)
    if not fields or fields[0] in ("Z", "X"):
        return False
    return process_start_ticks(orphan.pid) == orphan.ticks


def _signal(orphan: Orphan, mark: str, sig: signal.Signals) -> None:
    if _still(orphan, mark):
        with contextlib.suppress(OSError):
            os.kill(orphan.pid, sig)


def _tail_events(path: Path) -> list[dict[str, object]]:
    """The events in the last 256 KiB of `events.jsonl` (the attempt in flight is near the end)."""
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - _EVENTS_TAIL))
            if size > _EVENTS_TAIL:
                fh.readline()  # a partial first line
            tail = fh.read()
    except OSError:
        return []
    out = []
    for line in tail.splitlines():
        with contextlib.suppress(ValueError):
            obj = json.loads(line)
            if isinstance(obj, dict):
                out.append(obj)
    return out
