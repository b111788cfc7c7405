"""Is the agent changing files in the project? One watch of the tree, started in the background
so a large tree never delays the run, remembers when a file last changed (issue 17). aidd's own
runtime files and `.git` (where aidd writes its checkpoints) are not the agent's activity: on
Linux their folders are not even watched (project/inotify, one thread); elsewhere one recursive
watchdog observer sees them and drops their events."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aidd.fsio import TMP_PREFIX, open_dir, open_file, unlink
from aidd.project.checkpoints import RUNTIME

if TYPE_CHECKING:
    from aidd.project.inotify import TreeWatch

_CHANGES = {"created", "modified", "deleted", "moved", "closed"}  # not "opened", not reads
_IGNORED_DIRS = (".git", *RUNTIME)
_AIDD_NAMES = (".aidd-tmp-", "aidd-crash-")  # aidd's atomic writes and crash reports
# How long `quiet` waits for its marker: about 1 ms usually; a checkpoint that looks for
# itself costs less than waiting longer.
QUIET_WAIT_S = 0.05
_BARRIER = ".aidd-tmp-quiet-"  # `quiet`'s marker: a temp name, out of every checkpoint


class FileActivity:
    """`last_change()`: the `now()` of the newest change seen, None before any; `problem`: why
    files are not watched, when they are not (the signal is then simply absent)."""

    def __init__(self, root: Path, now: Callable[[], float],
                 on_change: Callable[[str], None] | None = None, *,
                 project: Path | None = None) -> None:
        self.root = root  # watched: the project (`project` then), or a folder of it
        self._now = now
        self._on_change = on_change  # told each changed file's path (on the watch's thread)
        self._ignored = frozenset(str((project or root) / d) for d in _IGNORED_DIRS)
        self._prefixes = tuple(path + os.sep for path in self._ignored)
        self._last: float | None = None
        self._observer: Any = None
        self._closed = threading.Event()
        self.problem: str | None = None
        # Changes seen in the tree (aidd's own names included), for `quiet`; None once the
        # watch may have missed one (a watchdog warning: the kernel's queue overflowed).
        self._changes: int | None = 0
        self._markers = 0
        self._marker = ""  # the path of `quiet`'s marker now awaited
        self._kept = ""  # the name of its last marker, kept in `.automaker/` till `close`
        self._passed = threading.Event()
        self._lost = _Lost(self)

    def start(self) -> None:
        try:
            threading.Thread(target=self._watch, name="aidd-file-activity", daemon=True).start()
        except RuntimeError as exc:  # no thread left (a tight address-space limit)
            self.problem = f"cannot watch the project's files: {exc}"

    def last_change(self) -> float | None:
        return self._last

    def close(self) -> None:
        self._closed.set()
        if self._kept:
            with contextlib.suppress(OSError):
                unlink(self.root, self.root / ".automaker" / self._kept)
            self._kept = ""
        logging.getLogger("watchdog").removeHandler(self._lost)
        observer = self._observer  # read after `_closed` is set: see `_ready`
        if observer is None:
            return
        if isinstance(observer, _tree_watch()):
            observer.close()
        else:
            with contextlib.suppress(Exception):
                observer.stop()
                observer.join(timeout=2)

    def quiet(self, timeout_s: float | None = None) -> int | None:
        """A count of the tree's changes up to now (checkpoints, issue 33): equal counts at two
        moments mean no file outside aidd's runtime files changed in between, as far as the
        kernel told. A marker file made here, and seen coming through, proves every earlier
        change came through too (one queue, in order). None when that cannot be said: not
        watching yet, a lost event, the marker late (then a checkpoint looks for itself)."""
        if self._observer is None or self._changes is None or self.problem is not None:
            return None
        self._markers += 1  # a new name each time: a late marker proves nothing of now
        marker = self.root / ".automaker" / f"{_BARRIER}{os.getpid()}-{self._markers}"
        self._passed.clear()
        self._marker = str(marker)
        try:
            self._mark(marker)
        except OSError:  # UnsafePathError included: a planted link
            return None
        passed = self._passed.wait(QUIET_WAIT_S if timeout_s is None else timeout_s)
        return self._changes if passed else None

    def _mark(self, marker: Path) -> None:
        """`marker` made, as one more name of the last one (a link, then the old name gone):
        a new file costs a file system far more than a name (0.3 to 0.9 ms against 10 us on
        ext4 here). Never over a name that is there (a link, as O_EXCL, fails then)."""
        folder = open_dir(self.root, ".automaker")
        try:
            if self._kept:
                try:
                    os.link(self._kept, marker.name, src_dir_fd=folder, dst_dir_fd=folder,
                            follow_symlinks=False)
                except FileExistsError:
                    raise
                except OSError:  # removed or replaced by someone: made afresh
                    pass
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(self._kept, dir_fd=folder)
                    self._kept = marker.name
                    return
            os.close(open_file(self.root, marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            self._kept = marker.name
        finally:
            os.close(folder)

    def lose(self) -> None:
        self._changes = None

    def noticed(self, path: str, kind: str, directory: bool = False) -> None:
        """One filesystem event (the observer's thread calls this). A directory's `modified`
        only echoes a change to an entry, which has its own event: aidd's own writes into
        `.automaker/` would otherwise count as the agent's."""
        if kind not in _CHANGES or (directory and kind == "modified"):
            return
        if path in self._ignored or path.startswith(self._prefixes):
            return
        name = path.rpartition(os.sep)[2]
        if name.startswith(_BARRIER):
            if path == self._marker:
                self._passed.set()
            return
        if self._changes is not None and not name.startswith(TMP_PREFIX):
            self._changes += 1  # a temp file is in no checkpoint: only where it is renamed to
        if not name.startswith(_AIDD_NAMES):
            self._last = self._now()
            if self._on_change is not None and not directory:
                self._on_change(path)

    def _watch(self) -> None:
        """Adding the watches walks the whole tree: done here, off the run's thread, which
        then reads the kernel's queue on Linux."""
        if not sys.platform.startswith("linux"):
            self._observe()
            return
        try:
            _tree_watch()(str(self.root), self._ignored, self, self._closed).run(self._ready)
        except OSError as exc:  # the inotify watch limit; no inotify
            self.problem = f"cannot watch the project's files: {exc.strerror or exc}"

    def _ready(self, watch: object) -> None:
        self._observer = watch  # then `run` reads `_closed`, which `close` set before reading this

    def _observe(self) -> None:
        """Elsewhere: one recursive watchdog observer (three threads of its own)."""
        logging.getLogger("watchdog").addHandler(self._lost)
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
            _unheld(observer)
        except (OSError, RuntimeError) as exc:  # the inotify watch limit; no thread left
            self.problem = ("cannot watch the project's files: "
                            f"{getattr(exc, 'strerror', None) or exc}")
            with contextlib.suppress(Exception):
                observer.stop()
            return
        self._observer = observer
        if self._closed.is_set():
            self.close()


def _tree_watch() -> type[TreeWatch]:
    # Imported here: ctypes costs ~4 ms of start-up (-X importtime), paid by the watch's thread.
    from aidd.project.inotify import TreeWatch
    return TreeWatch


def _unheld(observer: Any) -> None:
    """No wait behind a rename's first half. watchdog holds every later event 0.5 s behind an
    IN_MOVED_FROM it has not paired with its IN_MOVED_TO yet, and its emitter sleeps that time
    out even when the pair comes a moment later (the emitter looked first: a few times a run
    for aidd's own atomic writes and git's index.lock) or never does (a rename out of the
    tree, or into a folder made a moment before, as aidd's first checkpoint ref of a run):
    each `quiet` marker behind it was late, a checkpoint's extra git run (issue 33). Unheld,
    an unpaired rename comes as a deletion and a creation, counted all the same, and watchdog
    watches a moved folder at its new path either way. An emitter built otherwise (another
    watchdog version) keeps its hold: its markers are only slower, never wrong."""
    for emitter in getattr(observer, "emitters", ()):
        source = getattr(emitter, "_inotify", None)  # 7.x: the watch group; 2.x-6.x: a buffer
        queue = getattr(getattr(source, "_move_event_grouper", source), "_queue", None)
        for name in ("delay", "delay_sec"):  # watchdog's DelayedQueue, by version
            if isinstance(getattr(queue, name, None), (int, float)):
                setattr(queue, name, 0)
                break


class _Lost(logging.Handler):
    """watchdog's warnings (a queue overflow, a watch it could not rebuild) mean changes may
    have gone unseen: `quiet` says nothing from then on. Nothing is printed."""

    def __init__(self, activity: FileActivity) -> None:
        super().__init__(logging.WARNING)
        self._activity = activity

    def emit(self, record: logging.LogRecord) -> None:
        self._activity.lose()
