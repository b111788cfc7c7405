"""A run's progress for heartbeats: read `.automaker/events.jsonl` on from an offset and fold the
new events into a `Progress` (iteration, last result, cost); the features passing come from the
project's feature files when an iteration ends."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import Any

from aidd.fleet.records import Progress
from aidd.project.features import load_features
from aidd.project.paths import ProjectPaths

READ_LIMIT = 4 << 20  # bytes read per heartbeat: a huge backlog is caught up in steps


def advance(progress: Progress, root: Path) -> Progress:
    """`progress` with the events appended since its offset (whole lines only)."""
    paths = ProjectPaths(root)
    chunk, start = _read_from(paths.events, progress.offset)
    if start != progress.offset:  # the file is new or was replaced: read it from the start
        progress = replace(progress, offset=start)
    end = chunk.rfind(b"\n") + 1
    if end == 0 and len(chunk) == READ_LIMIT:  # one line longer than we read: not aidd's
        return replace(progress, offset=progress.offset + len(chunk))
    if end == 0:
        return progress
    ended = False
    for line in chunk[:end].splitlines():
        event = _parse(line)
        if event is not None:
            progress = fold(progress, event)
            ended = ended or event.get("event") in ("iteration_end", "run_end")
    progress = replace(progress, offset=progress.offset + end)
    return with_features(progress, paths) if ended else progress


def fold(progress: Progress, event: dict[str, Any]) -> Progress:
    """One event's part of the progress."""
    name = str(event.get("event", ""))
    progress = replace(progress, last_event=name)
    if name == "iteration_start" and isinstance(event.get("number"), int):
        return replace(progress, iteration=event["number"])
    if name == "iteration_end":
        cost = event.get("cost_usd")
        result = event.get("result")
        number = event.get("number")
        return replace(progress, ended=progress.ended + 1,
                       last_ended=number if isinstance(number, int) else progress.last_ended,
                       result=result if isinstance(result, int) else progress.result,
                       cost_usd=progress.cost_usd + (cost if isinstance(cost, int | float)
                                                     else 0.0))
    return progress


def with_features(progress: Progress, paths: ProjectPaths) -> Progress:
    try:
        files = load_features(paths, validate=False)
    except OSError:
        return progress
    # As `aidd --status` and the morning report count them: every file, done in either
    # vocabulary (issue 18), an invalid file being one not done.
    done = sum(1 for f in files if f.feature is not None and f.feature.done)
    return replace(progress, features_total=len(files), features_passing=done)


def _read_from(path: Path, offset: int) -> tuple[bytes, int]:
    """The bytes from `offset` (from 0 when the file is now shorter), and where they start."""
    try:  # the agent may have put a link or a FIFO there: neither followed nor waited on
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return b"", offset
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return b"", offset
        size = info.st_size
        start = offset if offset <= size else 0
        return os.pread(fd, READ_LIMIT, start), start
    finally:
        os.close(fd)


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
