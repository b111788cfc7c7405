"""A run's files as they grow: `events.jsonl` from where the last read stopped (never from the
start again: a night of 10,000 attempts is read once), and the tail of an attempt's log. Both
are project files, read through fsio (no link out, no FIFO waited on) and bounded."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aidd.events import parse_event
from aidd.fsio import open_read
from aidd.logs.cleaning import clean_bytes

CHUNK = 8 << 20  # bytes read per poll: a bigger backlog is taken over the next polls
LINE_LIMIT = 1 << 20  # a longer line is planted (aidd's are under a few KiB): no event
TAIL_BYTES = 16 << 10  # how far back from a log's end its last lines are looked for
# Stands for a dropped overlong line until its newline comes: no JSON starts with it, so the
# whole line is then no event.
_DROPPED = b"\x00"


class EventsFollower:
    """Each `poll` returns the events appended since the last one. A file replaced or cut
    shorter (a cleaned project) is read again from its start, once."""

    def __init__(self, root: Path, path: Path) -> None:
        self._root = root
        self._path = path
        self._offset = 0
        self._partial = b""
        self._identity: tuple[int, int] | None = None
        self.behind = False  # the last poll stopped at CHUNK: more is there already

    def poll(self) -> list[dict[str, Any]]:
        try:
            with open_read(self._root, self._path) as file:
                info = os.fstat(file.fileno())
                if (info.st_dev, info.st_ino) != self._identity or info.st_size < self._offset:
                    self._identity = (info.st_dev, info.st_ino)
                    self._offset, self._partial = 0, b""
                file.seek(self._offset)
                chunk = file.read(CHUNK)
        except OSError:  # not there yet, or refused (a link out, a FIFO): nothing to show
            return []
        self._offset += len(chunk)
        self.behind = len(chunk) == CHUNK
        return [event for line in self._lines(chunk) if (event := parse_event(line))]

    def _lines(self, chunk: bytes) -> list[str] | list[bytes]:
        lines = (self._partial + chunk).split(b"\n")
        last = lines.pop()  # unfinished until its newline comes
        self._partial = last if len(last) <= LINE_LIMIT else _DROPPED
        lines = [line for line in lines if len(line) <= LINE_LIMIT]
        try:  # one decode for the chunk (events.event_lines: a third of the time)
            return b"\n".join(lines).decode("utf-8").split("\n") if lines else []
        except UnicodeDecodeError:
            return lines  # each line on its own: a bad one is skipped alone


@dataclass(frozen=True)
class Tail:
    lines: list[str]
    modified: float | None  # the log's mtime: when the agent last wrote (None: unreadable)


def log_tail(root: Path, path: Path, count: int) -> Tail:
    """The last `count` lines of a log, cleaned of escape sequences and box art as the
    cleaned logs are (LOG-21), undecodable bytes replaced. Not filtered yet: the screen passes
    each line through console.shown."""
    try:
        with open_read(root, path) as file:
            info = os.fstat(file.fileno())
            file.seek(max(0, info.st_size - TAIL_BYTES))
            data = file.read(TAIL_BYTES)
    except (OSError, ValueError):  # ValueError: a NUL in a path an event gave
        return Tail([], None)
    lines = clean_bytes(data).decode("utf-8", "replace").split("\n")
    if info.st_size > TAIL_BYTES:
        lines = lines[1:]  # cut mid-line
    # The CLI's JSON stream lines: the log also holds their readable form (`» tool: …`).
    lines = [line for line in lines if line.strip() and not _json_line(line.strip())]
    return Tail(lines[-count:] if count > 0 else [], info.st_mtime)


def log_modified(root: Path, path: Path) -> float | None:
    """When a log last grew (its mtime), opened as `log_tail` opens it; None: unreadable."""
    try:
        with open_read(root, path) as file:
            return os.fstat(file.fileno()).st_mtime
    except (OSError, ValueError):
        return None


def _json_line(line: str) -> bool:
    return line.startswith("{") and line.endswith("}")
