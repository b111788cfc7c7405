"""The agents' mark (REL-1): a random `AIDD_SUPERVISOR_ID` in every agent's environment, by which
what an agent left running is found and killed wherever it went, even after aidd itself was
killed with SIGKILL (the lock file records the mark for the next run); and the rest of aidd's
environment such a child gets (`child_environment`)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from aidd.clock import Clock
from aidd.events import parse_event
from aidd.fsio import open_read
from aidd.session import procfs, proctree
from aidd.session.proctree import ProcInfo

MARK_VAR = "AIDD_SUPERVISOR_ID"
_ITERATION_VAR = "AIDD_ITERATION"  # set by every adapter: the attempt a process belongs to
GATE_VAR = "AIDD_GATE_RUN"  # set on a gate command: the gate run a process belongs to
_ORPHAN_GRACE_S = 1.0
_EVENTS_TAIL = 256 * 1024


def child_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` for an agent, a helper run of its CLI or a gate command: no `AIDD_*` variable
    but the mark. aidd's own variables configure aidd and some hold credentials (the heartbeat
    URL, notification URLs and commands: issue 27 item 13); what a child needs of aidd
    (`AIDD_ITERATION`...) the adapter sets afresh."""
    return {key: value for key, value in environ.items()
            if not key.startswith("AIDD_") or key == MARK_VAR}


def new_mark() -> str:
    return secrets.token_hex(8)


class Marked(NamedTuple):
    """A process carrying a mark; a descendant inherits it, double-forked and setsid'd ones
    too, and a reused pid cannot carry it (the environment comes with the process)."""

    pid: int
    iteration: str | None  # the log number of the attempt it belongs to


def find_marked(mark: str, among: Iterable[int] | None = None) -> list[Marked]:
    """Every process (of `among`, by default all; other than aidd and its ancestors) carrying
    `mark`, by pid. Linux only (/proc): elsewhere none is found, so none is killed."""
    return [_marked(c) for c in procfs.find_carrying(MARK_VAR, mark, among)]


def kill_orphans(record: Mapping[str, object], events_path: Path, clock: Clock, *,
                 root: Path) -> list[ProcInfo]:
    """Kill what the run that wrote lock `record` left behind (with a grace). Under
    `--keep-children` only the tree of the attempt it died in: descendants of finished
    attempts were kept on purpose."""
    mark = record.get("agent_mark")
    if not isinstance(mark, str) or not mark:
        return []
    if record.get("keep_children") is not True:
        return _kill(mark, clock, lambda o: True, _ORPHAN_GRACE_S)
    in_flight = in_flight_attempts(events_path, root)
    return _kill(mark, clock, lambda o: o.iteration in in_flight, _ORPHAN_GRACE_S)


def sweep(mark: str, clock: Clock,
          select: Callable[[Marked], bool] = lambda o: True) -> list[ProcInfo]:
    """Kill every process carrying `mark` that `select` picks, with no grace: the safety net
    after the graceful kills. Returns the processes killed."""
    return _kill(mark, clock, select, 0.0)


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


def in_flight_attempts(events_path: Path, root: Path) -> set[str]:
    """Log numbers whose `iteration_start` has no `iteration_end` (the attempt aidd died in);
    `root`: the project, which events.jsonl may not lead out of."""
    started: set[str] = set()
    for event in _tail_events(root, events_path):
        number = str(event.get("number"))
        if event.get("event") == "iteration_start":
            started.add(number)
        elif event.get("event") == "iteration_end":
            started.discard(number)
    return started


def of_attempt(environ: Mapping[str, str], number: int,
               among: Iterable[int] | None = None) -> list[int]:
    """Processes (of `among`, by default all) carrying the run's mark and attempt `number`,
    wherever they went."""
    found = find_marked(environ.get(MARK_VAR, ""), among)
    return [o.pid for o in found if o.iteration == str(number)]


def other_attempts(environ: Mapping[str, str], number: int) -> set[int]:
    """Processes carrying the run's mark that belong to another attempt than `number`, and
    aidd's own commands (git, a gate), which carry no attempt: never adopted orphans of this
    one, though aidd is their parent (--parallel N, docs/parallel.md)."""
    own = str(number)
    return {found.pid for found in find_marked(environ.get(MARK_VAR, "")) if found.iteration != own}


def gate_environment(environ: Mapping[str, str], run: str) -> dict[str, str]:
    """A gate command's environment: a child's (the mark kept), tagged with its own `run`."""
    return {**child_environment(environ), GATE_VAR: run}


def not_of_gate(environ: Mapping[str, str], run: str) -> set[int]:
    """Processes carrying the run's mark that are not gate run `run`'s: agents, another slot's
    gate, aidd's own git runs, started on other threads while it ran (docs/parallel.md
    "Process trees")."""
    return {c.pid for c in procfs.find_carrying(MARK_VAR, environ.get(MARK_VAR, ""))
            if c.environ.get(GATE_VAR) != run}


def _kill(mark: str, clock: Clock, select: Callable[[Marked], bool],
          grace_s: float) -> list[ProcInfo]:
    scan = proctree.carrier_scan(MARK_VAR, mark, lambda c: select(_marked(c)))
    return list(proctree.terminate(scan, grace_s=grace_s, clock=clock).procs)


def _marked(carrier: procfs.Carrier) -> Marked:
    return Marked(carrier.pid, carrier.environ.get(_ITERATION_VAR))


def _tail_events(root: Path, path: Path) -> list[dict[str, Any]]:
    """The events in the last 256 KiB of `events.jsonl` (the attempt in flight is near the end).
    A project file: never a FIFO waited on or a link out of `root` (fsio)."""
    try:
        with open_read(root, path) as file:
            size = os.fstat(file.fileno()).st_size
            start = max(0, size - _EVENTS_TAIL)
            tail = os.pread(file.fileno(), _EVENTS_TAIL, start)
    except OSError:
        return []
    lines = tail.split(b"\n")[1 if start else 0:]  # from mid-file: the first line is partial
    return [event for line in lines if (event := parse_event(line)) is not None]
