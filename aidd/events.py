"""`.automaker/events.jsonl`: one append-only JSON line per event (LOG-40..43)."""

from __future__ import annotations

import contextlib
import copy
import json
import os
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from aidd.clock import Clock, SystemClock
from aidd.fsio import open_dir, open_file, open_read, read_file, write_all
from aidd.numbers import json_safe

SCHEMA_VERSION = 1
# Hundreds of thousands of events: years of nights. A bigger file is not read (planted, or
# never cleaned), and readers then see no events.
EVENTS_LIMIT = 256 << 20
# `--parallel N`'s slots a view shows a lane for (docs/parallel.md): a bigger `slot` is forged,
# and a forged file cannot make a view keep or draw more lanes than this.
MAX_SLOTS = 64


def slot_of(event: dict[str, Any]) -> int | None:
    """The `slot` tag of a `--parallel N` attempt's event (1..MAX_SLOTS); None when it has
    none, or a value no aidd writes (a string, a bool, 0, negative, huge)."""
    value = event.get("slot")
    return value if type(value) is int and 1 <= value <= MAX_SLOTS else None


def make_run_id(started: datetime, pid: int) -> str:
    return started.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ") + f"-{pid}"


class EventLog:
    """Each event is one `write` to a file opened O_APPEND (never through a link, fsio), so
    lines never interleave or tear (except the very last one when aidd is SIGKILLed mid-write
    or the disk fills; readers skip it, and the next run starts on a fresh line). Times come
    from `clock`, the run's. The file stays open until `close` (the run's end), and is opened
    again whenever its path no longer names it (`_Kept`)."""

    def __init__(self, path: Path, run_id: str, *, root: Path | None = None,
                 clock: Clock | None = None) -> None:
        self.path = path
        self.root = root if root is not None else path.parent
        self.run_id = run_id
        self._clock = clock or SystemClock()
        self._file = _Kept(self.root, path)  # shared by the `tagged` copies
        # Told each record before its line is written (the notifications: aidd/run/alarms.py);
        # a listener must return at once, and one that fails is skipped.
        self.listeners: list[Callable[[dict[str, Any]], None]] = []
        self.tags: dict[str, Any] = {}  # added to every event (a --parallel slot's)

    def tagged(self, **tags: Any) -> EventLog:
        """The same log (file, run, clock, listeners), each event carrying `tags`: a
        --parallel slot's `slot` and `feature` (docs/events.md)."""
        other = copy.copy(self)
        other.tags = {**self.tags, **tags}
        return other

    def emit(self, event: str, **fields: Any) -> None:
        record: dict[str, Any] = {
            "v": SCHEMA_VERSION,
            "ts": _stamp(self._clock.now()),
            "run": self.run_id,
            "event": event,
            **fields,
            **self.tags,
        }
        for listener in list(self.listeners):
            with contextlib.suppress(Exception):  # never fatal (issue 16): the line is written
                listener(record)
        self._file.append(_line(record).encode("utf-8", "replace"))

    def close(self) -> None:
        """At the run's end; an event after it opens the file again."""
        self._file.close()


class _Kept:
    """The events file kept open (issue 33: an open per path component for every event cost
    0.6 ms), with the directories leading to it, each opened as fsio opens them (never through
    a link): whether the path still names the file is then one fstatat per component, with
    no open and no link followed. When it does not (the agent deleted, renamed or replaced the
    file, planted a link or a hard link there, swapped a directory) the file is opened again
    through fsio, which creates a fresh one or refuses the link, as on the first event."""

    def __init__(self, root: Path, path: Path) -> None:
        self._root, self._path = root, path
        self._names = path.relative_to(root).parts if path.is_relative_to(root) else ()
        self._fds: list[int] = []  # the root's, each directory's below it, the file's
        self._ids: list[tuple[int, int]] = []  # (device, inode) of each
        self._lock = threading.Lock()  # --parallel N's slots emit from their threads

    def append(self, line: bytes) -> None:
        with self._lock:
            opened = not self._still_named()
            if opened:
                self._reopen()
            fd = self._fds[-1]
            # read-write for one pread of the last byte (a torn line, issue 13 item 12)
            write_all(fd, (_fresh_line(fd) if opened else b"") + line)

    def close(self) -> None:
        with self._lock:
            self._close()

    def _still_named(self) -> bool:
        if not self._fds:
            return False
        try:
            if _identity(self._root.stat()) != self._ids[0]:
                return False
            for parent, name, known in zip(self._fds, self._names, self._ids[1:],
                                           strict=False):
                info = os.stat(name, dir_fd=parent, follow_symlinks=False)
                if _identity(info) != known:
                    return False
        except OSError:
            return False
        return info.st_nlink == 1  # the file itself, never given a second name

    def _reopen(self) -> None:
        self._close()
        fds: list[int] = []
        try:  # the directories first: a file opened last is never older than they are
            for depth in range(len(self._names)):
                fds.append(open_dir(self._root, Path(*self._names[:depth])))
            fds.append(open_file(self._root, self._path, os.O_RDWR | os.O_CREAT | os.O_APPEND))
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        self._fds, self._ids = fds, [_identity(os.fstat(fd)) for fd in fds]

    def _close(self) -> None:
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds, self._ids = [], []


def _line(record: dict[str, Any]) -> str:
    """Never NaN or Infinity, which are not JSON (issue 27): a non-finite float is null. The
    walk that finds them only when `json` refused one (it was 40 % of an event, issue 33)."""
    try:
        text = json.dumps(record, ensure_ascii=False, default=str, allow_nan=False)
    except ValueError:
        text = json.dumps(json_safe(record), ensure_ascii=False, default=str, allow_nan=False)
    return text + "\n"


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _stamp(now: datetime) -> str:
    """UTC with milliseconds and a `Z`: `2026-11-22T12:00:00.000Z` (LOG-41)."""
    return now.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _fresh_line(fd: int) -> bytes:
    """A newline when the file ends inside a torn line, so our first event is a line of its
    own instead of the tail of that one (issue 13 item 12)."""
    size = os.fstat(fd).st_size
    return b"\n" if size and os.pread(fd, 1, size - 1) != b"\n" else b""


def read_events(path: Path) -> list[dict[str, Any]]:
    """Every parseable line; a torn last line from a crash is skipped (LOG-40)."""
    return load_events(path).events


class EventsRead(NamedTuple):
    events: list[dict[str, Any]]
    skipped: int  # lines that are not a JSON object: torn by a crash, or written by someone else
    error: str | None  # why the file was not read at all (over the cap, a FIFO, a link out)


def load_events(path: Path) -> EventsRead:
    """`read_events`, saying what it left out: the file is untrusted, a reader must not crash
    on it, and a report should say when it could not believe all of it."""
    lines, error = event_lines(path)
    out: list[dict[str, Any]] = []
    skipped = 0
    for line in lines:
        event = parse_event(line)
        if event is not None:
            out.append(event)
        else:
            skipped += bool(line.strip())
    return EventsRead(out, skipped, error)


def tail_events(path: Path, root: Path, limit: int) -> list[dict[str, Any]]:
    """The events of the file's last `limit` bytes (a line cut at the start left out): the end
    of the newest run, read at start without reading years of nights. None when unreadable."""
    try:
        with open_read(root, path) as file:
            start = max(0, os.fstat(file.fileno()).st_size - limit)
            file.seek(start)
            lines = file.read(limit).split(b"\n")
    except OSError:  # missing, a FIFO, a link out: no previous run to tell
        return []
    if start:
        lines = lines[1:]
    return [e for e in map(parse_event, lines) if e is not None]


def event_lines(path: Path, root: Path | None = None) -> tuple[list[str] | list[bytes],
                                                               str | None]:
    """The file's lines, unparsed (a reader may skip the ones it needs not), and why it could
    not be read at all. `root`: the project, which the file may not lead out of (a symlinked
    `.automaker` included); by default the file's own directory."""
    try:  # a project file: never a FIFO that blocks, a link out, or gigabytes (fsio)
        raw = read_file(root or path.parent, path, EVENTS_LIMIT)
    except FileNotFoundError:
        return [], None
    except OSError as exc:
        return [], str(exc)
    try:  # one decode for the file, not one per line: a third of the time at 40,000 lines
        return raw.decode("utf-8").split("\n"), None  # not splitlines(): U+2028 is text
    except UnicodeDecodeError:
        return raw.split(b"\n"), None  # each line on its own: a bad one is skipped alone


def parse_event(line: str | bytes) -> dict[str, Any] | None:
    """One line as an event; None for a torn line, one that is not JSON or not an object (or
    whose `event` is no string). The one parser of events.jsonl lines (docs/architecture.md
    "Owners"): the file is project content, so a planted line nested deep enough to exhaust
    the stack is just not an event."""
    try:
        obj = _decode(line) if isinstance(line, str) else json.loads(line)
    except (ValueError, RecursionError):  # UnicodeDecodeError included
        return None
    # A name that is no string is no event: readers look names up in sets and dicts, and a
    # planted `"event": []` made that a crash of --status and the morning report.
    return obj if isinstance(obj, dict) and isinstance(obj.get("event", ""), str) else None


def _decode(line: str) -> object:
    """`raw_decode`, then only white space may follow: a tenth faster than `decode` (which
    looks for white space at both ends) on the lines aidd writes, which start with `{`."""
    start = 0 if line[:1] == "{" else len(line) - len(line.lstrip())
    obj, end = _DECODER.raw_decode(line, start)
    if end != len(line) and not line[end:].isspace():
        raise ValueError("extra data after the event")
    return obj


_DECODER = json.JSONDecoder()
