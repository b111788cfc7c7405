"""`.automaker/.stop`: a watchdog observer plus a 1 s poll turn the file into an event (SUP-90)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from aidd.fsio import make_dirs, write_atomic

POLL_S = 1.0


def request_stop(root: Path, stop_file: Path, now: datetime) -> None:
    """`aidd --stop`: write the file with the current time, atomically."""
    make_dirs(root, stop_file.parent)
    write_atomic(stop_file, now.isoformat(timespec="seconds") + "\n", root=root)


class StopWatcher:
    """Calls `on_request` once, from a worker thread, when `.stop` appears.

    It only reports: the decision to exit is taken by the run loop (EXIT-7).
    """

    def __init__(self, stop_file: Path, on_request: Callable[[], None]) -> None:
        self.stop_file = stop_file
        self._on_request = on_request
        self._noticed = threading.Event()
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._observer: Any = None
        self._poller = threading.Thread(target=self._poll, name="aidd-stop-poll", daemon=True)

    def start(self) -> None:
        self._start_observer()
        self._poller.start()

    def present(self) -> bool:
        return self.stop_file.exists()

    def consume(self) -> None:
        """Honour the request: delete the file (SUP-90)."""
        with contextlib.suppress(FileNotFoundError):
            self.stop_file.unlink()

    def close(self) -> None:
        self._closed.set()
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

    def _poll(self) -> None:
        while not self._closed.wait(POLL_S):
            self._check()

    def _start_observer(self) -> None:
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:  # the poll alone still meets the 1 s bound
            return
        watcher = self

        class _Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                watcher._check()

        observer = Observer()
        try:
            observer.schedule(_Handler(), str(self.stop_file.parent), recursive=False)
            observer.daemon = True
            observer.start()
        except OSError:
            return
        self._observer = observer
