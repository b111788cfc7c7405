"""A run's progress for heartbeats: read `.automaker/events.jsonl` on from an offset and fold the
new events into a `Progress` (iteration, results, cost, hosts); the features passing come from
the project's feature files when an iteration ends. A retry resumes the last attempt's progress,
reading on in the same file when it runs where that attempt ran."""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeGuard

from aidd.events import parse_event
from aidd.fleet.gitrun import is_object_id
from aidd.fleet.records import ENDS_KEPT, Progress
from aidd.fsio import open_read
from aidd.numbers import money
from aidd.project.features import load_features
from aidd.project.paths import ProjectPaths

TEXT_LIMIT = 200  # characters kept of an event's string (a name, a run id, a time)
READ_LIMIT = 4 << 20  # bytes read per heartbeat: a huge backlog is caught up in steps
# The name this machine goes by in the fleet (Progress.host; `aidd fleet report` compares it
# with the hosts of a run), instead of the host name. A test seam first: the tests run two
# "machines" (workers with their own data dirs) on one host; also of use where the host name
# says nothing (a container's).
HOST_ENV = "AIDD_FLEET_HOST"


def this_host(environ: Mapping[str, str]) -> str:
    """This machine's name in the fleet: $AIDD_FLEET_HOST, else the host name."""
    return environ.get(HOST_ENV) or socket.gethostname()


def resumed(carried: Progress | None, root: Path, host: str) -> Progress:
    """An attempt's start on `host` in `root`: the last attempt's progress (`carried`, None for
    the first) read on from its offset when that attempt ran in this same events.jsonl; else
    (the first attempt, or the last one ran on another machine or in another checkout, whose
    offset says nothing about this file) from this file's end: what it holds so far is not this
    run's."""
    same_file = carried is not None and carried.host == host and carried.root in ("", str(root))
    if carried is None or not same_file:
        carried = replace(carried or Progress(), offset=_size(ProjectPaths(root).events))
    hosts = carried.hosts if host in carried.hosts else [*carried.hosts, host]
    return replace(carried, host=host, root=str(root), hosts=hosts)


def advance(progress: Progress, root: Path) -> Progress:
    """`progress` with the events appended since its offset (whole lines only)."""
    paths = ProjectPaths(root)
    chunk, start = _read_from(root, paths.events, progress.offset)
    if start != progress.offset:  # the file is new or was replaced: read it from the start
        progress = replace(progress, offset=start)
    end = chunk.rfind(b"\n") + 1
    if end == 0 and len(chunk) == READ_LIMIT:  # one line longer than we read: not aidd's
        return replace(progress, offset=progress.offset + len(chunk))
    if end == 0:
        return progress
    ended = False
    for line in chunk[:end].splitlines():
        event = parse_event(line)
        if event is not None:
            progress = fold(progress, event)
            ended = ended or event.get("event") in ("iteration_end", "run_end")
    progress = replace(progress, offset=progress.offset + end)
    return with_features(progress, paths) if ended else progress


def fold(progress: Progress, event: dict[str, Any]) -> Progress:
    """One event's part of the progress. events.jsonl lies in the project, where the agent can
    write too: what is kept of an event is bounded (short strings, small numbers, object ids
    only), so a forged line cannot swell the heartbeat past what the server takes."""
    name = _text(event.get("event"))
    progress = replace(progress, last_event=name)
    ts = _text(event.get("ts")) or None
    number = event.get("number") if _small(event.get("number")) else None
    if name == "run_start":
        return replace(progress, run_id=_text(event.get("run")), run_reason="")
    if name == "iteration_start" and number is not None:
        return replace(progress, iteration=number)
    if name == "iteration_end":
        result = event.get("result") if _small(event.get("result")) else None
        amount = money(event.get("cost_usd"))  # a forged NaN or -1e9 is an unknown cost
        by_result = dict(progress.by_result)
        if result is not None:
            by_result[str(result)] = by_result.get(str(result), 0) + 1
        tree = progress.end_checkpoint if number is not None and number == \
            progress.end_checkpoint_of else ""
        end = f"{'?' if number is None else number} {tree}".rstrip()
        return replace(progress, ended=progress.ended + 1, ends=[*progress.ends, end][-ENDS_KEPT:],
                       cut=progress.cut + int(event.get("reason") == "signal"),
                       last_ended=progress.last_ended if number is None else number,
                       result=progress.result if result is None else result,
                       cost_usd=progress.cost_usd + (amount or 0.0),
                       costs_unknown=progress.costs_unknown + int(amount is None),
                       tokens=progress.tokens + _tokens(event.get("tokens")),
                       by_result=by_result, last_end_at=ts or progress.last_end_at)
    if name == "checkpoint" and _text(event.get("label")).endswith("-end"):
        commit = event.get("commit")
        return replace(progress, end_checkpoint=commit if is_object_id(commit) else "",
                       end_checkpoint_of=number or 0)
    if name == "run_end":
        return replace(progress, run_reason=_text(event.get("reason")) or "?",
                       last_end_at=ts or progress.last_end_at)
    return progress


def _tokens(value: object) -> int:
    """An iteration's tokens, all kinds summed; what is not a count as aidd writes it is 0."""
    counts = value.values() if isinstance(value, dict) else ()
    return sum(count for count in counts if _small(count))


def _text(value: object, limit: int = TEXT_LIMIT) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _small(value: object) -> TypeGuard[int]:
    """An iteration number or a result as aidd writes them (not a forged 4,000-digit one)."""
    return _is_int(value) and 0 <= value < 1 << 31


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def with_features(progress: Progress, paths: ProjectPaths) -> Progress:
    try:
        files = load_features(paths, validate=False)
    except OSError:
        return progress
    # As `aidd --status` and the morning report count them: every file, done in either
    # vocabulary (issue 18), an invalid file being one not done.
    done = sum(1 for f in files if f.feature is not None and f.feature.done)
    return replace(progress, features_total=len(files), features_passing=done)


def _size(path: Path) -> int:
    """The file's size (0 when there is none or it is not a plain file: read from its start)."""
    try:
        info = path.lstat()
    except OSError:
        return 0
    return info.st_size if stat.S_ISREG(info.st_mode) else 0


def _read_from(root: Path, path: Path, offset: int) -> tuple[bytes, int]:
    """The bytes from `offset` (from 0 when the file is now shorter), and where they start."""
    try:  # the agent may have put a link out or a FIFO there: neither followed nor waited on
        with open_read(root, path) as file:
            size = os.fstat(file.fileno()).st_size
            start = offset if offset <= size else 0
            return os.pread(file.fileno(), READ_LIMIT, start), start
    except OSError:
        return b"", offset
