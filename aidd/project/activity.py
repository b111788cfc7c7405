"""Is the agent changing files in the project? One recursive watchdog observer, started in the
background so a large tree never delays the run, remembers when a file last changed (issue 17).
aidd's own runtime files and `.git` (where aidd writes its checkpoints) are not the agent's
activity."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aidd.project.checkpoints import RUNTIME

_CHANGES = {"created", "modified", "deleted", "moved", "closed"}  # not "opened", not reads
_IGNORED_DIRS = (".git", *RUNTIME)
_AIDD_NAMES = (".aidd-tmp-", "aidd-crash-")  # aidd's atomic writes and crash reports


class FileActivity:
    """`last_change()`: the `now()` of the newest change seen, None before any; `problem`: why
    files are not watched, when they are not (the signal is then simply absent)."""

    def __init__(self, root: Path, now: Callable[[], float],
                 on_change: Callable[[str], None] | None = None) -> None:
        self.root = root
        self._now = now
        self._on_change = on_change  # told each changed file's path (on the observer's thread)
        self._ignored = frozenset(str(root / d) for d in _IGNORED_DIRS)
        self._prefixes = tuple(path + os.sep for path in self._ignored)
        self._last: float | None = None
        self._observer: Any = None
        self._closed = threading.Event()
        self.problem: str | None = None

    def start(self) -> None:
        try:
            threading.Thread(target=self._watch, name="aidd-file-activity", daemon=True).start()
        except RuntimeError as exc:  # no thread left (a tight address-space limit)
            self.problem = f"cannot watch the project's files: {exc}"

    def last_change(self) -> float | None:
        return self._last

    def close(self) -> None:
        self._closed.set()
        observer = self._observer
        if observer is not None:
            with contextlib.suppress(Exception):
                observer.stop()
                observer.join(timeout=2)

    def noticed(self, path: str, kind: str, directory: bool = False) -> None:
        """One filesystem event (the observer's thread calls this). A directory's `modified`
        only echoes a change to an entry, which has its own event: aidd's own writes into
        `.automaker/` would otherwise count as the agent's."""
        if kind not in _CHANGES or (directory and kind == "modified"):
            return
        if path in self._ignored or path.startswith(self._prefixes):
            return
        if not path.rpartition(os.sep)[2].startswith(_AIDD_NAMES):
            self._last = self._now()
            if self._on_change is not None and not directory:
                self._on_change(path)

    def _watch(self) -> None:
        """Adding the watches walks the whole tree: done here, off the run's thread."""
        logging.getLogger("watchdog").addHandler(logging.NullHandler())
        logging.getLogger("watchdog").propagate = False
        # Its notes on a directory made and removed quickly are no business of the user's.
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"watchdog\.")
        try:
            from watchdog import events
            from watchdog.observers import Observer
        except ImportError:
            self.problem = "watchdog is not installed"
            return
        activity = self

        class _Handler(events.FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                activity.noticed(os.fsdecode(event.src_path), str(event.event_type),
                                 bool(event.is_directory))
                if getattr(event, "dest_path", ""):  # a file renamed into place
                    activity.noticed(os.fsdecode(event.dest_path), str(event.event_type),
                                     bool(event.is_directory))

        observer = Observer()
        observer.daemon = True
        try:
            observer.start()
            # Changes only: watchdog's default mask has opens and reads too, and its own walk
            # of a large tree (it opens every directory) then overflows the kernel's queue
            # (16,384 events), rewalks, overflows again, and never reports a change: measured
            # with 20,100 directories.
            observer.schedule(_Handler(), str(self.root), recursive=True, event_filter=[
                events.FileCreatedEvent, events.FileModifiedEvent, events.FileDeletedEvent,
                events.FileMovedEvent, events.FileClosedEvent, events.DirCreatedEvent,
                events.DirDeletedEvent, events.DirMovedEvent])
        except (OSError, RuntimeError) as exc:  # the inotify watch limit; no thread left
            self.problem = ("cannot watch the project's files: "
                            f"{getattr(exc, 'strerror', None) or exc}")
            with contextlib.suppress(Exception):
                observer.stop()
            return
        self._observer = observer
        if self._closed.is_set():
            self.close()
