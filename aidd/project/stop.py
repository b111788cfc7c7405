"""`.automaker/.stop`: a watch of `.automaker/` (inotify on Linux, a watchdog observer
elsewhere) plus a 1 s poll turn the file into an event (SUP-90)."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aidd.fsio import make_dirs, write_atomic

if TYPE_CHECKING:
    from aidd.project.inotify import TreeWatch

POLL_S = 1.0


def request_stop(root: Path, stop_file: Path, now: datetime) -> None:
    """`aidd --stop`: write the file with the current time, atomically. A `.stop` directory
    is already a request: it is left as it is."""
    make_dirs(root, stop_file.parent)
    if stop_file.is_dir() and not stop_file.is_symlink():
        return
    write_atomic(stop_file, now.isoformat(timespec="seconds") + "\n", root=root)


def stale_stop(stop_file: Path, run_started: datetime) -> bool:
    """A `.stop` left from before this run (SUP-90). One written after the run started (an
    `aidd --stop` answered while this run was starting up) is a request to honour (issue 13
    item 9). A directory of that name is a request too, never a crash (item 10)."""
    try:
        mtime = stop_file.lstat().st_mtime
    except OSError:
        return False
    return mtime < run_started.timestamp() - 1.0  # file times can lag the clock a little


def remove_stop(stop_file: Path) -> bool:
    """Delete the request: the file, a link itself, or the (empty) directory an agent made.
    False when it could not be removed (it then stays, and still asks to stop)."""
    try:
        if stop_file.is_dir() and not stop_file.is_symlink():
            stop_file.rmdir()
        else:
            stop_file.unlink()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


class StopWatcher:
    """Calls `on_request` once, from a worker thread, when `.stop` appears.

    It only reports: the decision to exit is taken by the run loop (EXIT-7).
    """

    def __init__(self, stop_file: Path, on_request: Callable[[], None]) -> None:
        self.stop_file = stop_file
        self._path = str(stop_file)
        self._on_request = on_request
        self._noticed = threading.Event()
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._observer: Any = None  # elsewhere than Linux: watchdog's
        self._watch: TreeWatch | None = None
        self._poller = threading.Thread(target=self._poll, name="aidd-stop-poll", daemon=True)

    def start(self) -> None:
        if sys.platform.startswith("linux"):
            threading.Thread(target=self._watch_names, name="aidd-stop-watch",
                             daemon=True).start()
        else:
            self._start_observer()
        self._poller.start()

    def present(self) -> bool:
        return os.path.lexists(self.stop_file)

    def consume(self) -> None:
        """Honour the request: delete it (SUP-90)."""
        remove_stop(self.stop_file)

    def close(self) -> None:
        self._closed.set()
        if self._watch is not None:
            self._watch.close()
        if self._observer is not None:
            with contextlib.suppress(Exception):
                self._observer.stop()
                self._observer.join(timeout=2)

    def _check(self) -> None:
        with self._lock:
            if self._noticed.is_set() or not self.present():
                return
            self._noticed.set()
        self._on_request()

    def noticed(self, path: str, kind: str, directory: bool = False) -> None:
        """A name made or moved into `.automaker/` (the watch's thread calls this): one look
        when it is `.stop`; the others are aidd's own atomic writes and markers."""
        if path == self._path:
            self._check()

    def lose(self) -> None:
        self._check()

    def _watch_names(self) -> None:
        """Names made or moved in, only: the kernel leaves out every write, open and read in
        .automaker/ (events.jsonl at each event, status.md, the checkpoint index). Made here,
        off the run's thread: ctypes costs ~4 ms of start-up, watchdog ~45 ms (-X importtime)."""
        from aidd.project.inotify import NAMES, TreeWatch
        with contextlib.suppress(OSError):  # no inotify: the poll alone still meets the 1 s bound
            TreeWatch(str(self.stop_file.parent), frozenset(), self, self._closed, mask=NAMES,
                      below=False).run(self._watching)

    def _watching(self, watch: TreeWatch) -> None:
        self._watch = watch  # then `run` reads `_closed`, which `close` set before reading this

    def _poll(self) -> None:
        while not self._closed.wait(POLL_S):
            self._check()

    def _start_observer(self) -> None:
        """Elsewhere than Linux: a watchdog observer (three threads of its own)."""
        # watchdog logs to the root logger; with no handler Python would print its notes
        # ("InotifyEmitter.queue_events() called when the thread is inactive") on stderr.
        logging.getLogger("watchdog").addHandler(logging.NullHandler())
        logging.getLogger("watchdog").propagate = False
        # Imported here, not at the top: watchdog costs ~45 ms of start-up (measured with
        # -X importtime), which `aidd --stop` (request_stop, same module) never needs.
        try:
            from watchdog import events
            from watchdog.observers import Observer
        except ImportError:  # the poll alone still meets the 1 s bound
            return
        watcher = self

        class _Handler(events.FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                watcher._check()

        observer = Observer()
        try:
            # Names made or moved in, only (a file, a link, a folder, `aidd --stop`'s rename):
            # the kernel then leaves out every write, open and read in .automaker/ (events.jsonl
            # at each event, status.md, the checkpoint index), each of which woke three of
            # watchdog's threads and a look for the file (issue 33).
            observer.schedule(_Handler(), str(self.stop_file.parent), recursive=False,
                              event_filter=[events.FileCreatedEvent, events.DirCreatedEvent,
                                            events.FileMovedEvent, events.DirMovedEvent])
            observer.daemon = True
            observer.start()
        except OSError:
            return
        self._observer = observer
