"""The run's file watch on Linux (issue 33): one inotify descriptor with a watch per folder,
none on a folder left out (`.git`, aidd's runtime folders), so the kernel never even queues
the writes git and aidd make there, and one thread that reads the queue in order.

watchdog (7.1) cannot leave a folder out of a recursive watch, and its three threads took
the GIL ~3 ms an iteration for writes that were then dropped. Its own inotify layer is no base
to build on: 7.x's `InotifyFD` is a thread with a callback registry, 3.x-6.x's `Inotify` walks
the tree itself with nothing left out (pyproject allows both); the three calls are a few lines
of ctypes here, with IN_CLOEXEC, which watchdog's `inotify_init` has not (the agent would
inherit the descriptor)."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import select
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from aidd.fsio import open_dir

_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_Q_OVERFLOW, _IGNORED, _ISDIR = 0x4000, 0x8000, 0x40000000
_ONLYDIR, _EXCL_UNLINK, _CLOEXEC = 0x1000000, 0x4000000, 0o2000000
# Changes only: no opens, no reads. No IN_DONT_FOLLOW: a watch is added through its folder's
# /proc/self/fd link, which must be followed; the folder was opened without following any.
MASK = (_MODIFY | _ATTRIB | _CLOSE_WRITE | _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE
        | _ONLYDIR | _EXCL_UNLINK)
_KINDS = ((_CREATE, "created"), (_MOVED_FROM, "moved"), (_MOVED_TO, "moved"),
          (_DELETE, "deleted"), (_CLOSE_WRITE, "closed"))  # else IN_MODIFY, IN_ATTRIB
NAMES = _CREATE | _MOVED_TO | _ONLYDIR  # names made or moved in, only (the `.stop` watch)
_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len; then the name
_BUFFER = 64 * 1024
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Sink(Protocol):
    def noticed(self, path: str, kind: str, directory: bool = False) -> None: ...

    def lose(self) -> None: ...


@functools.cache
def _libc() -> Any:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.inotify_init1.argtypes = [ctypes.c_int]
    libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    return libc


def _failed(what: str) -> OSError:
    code = ctypes.get_errno()
    return OSError(code, f"{what}: {os.strerror(code)}")


class TreeWatch:
    """`run` watches `root` and every folder below it but those in `skip` (absolute paths),
    then tells `sink` each change until `closed` is set and `close` called. A folder made,
    or moved in, is watched as its event is read, and what it already holds is told as made
    (it may have come before the watch); one moved out, or into a skipped folder, no longer is.
    Symlinks are never followed. OSError when the tree cannot be watched (the watch limit).
    `mask`: the events asked for; `below` False: `root` alone is watched."""

    def __init__(self, root: str, skip: frozenset[str], sink: Sink, closed: threading.Event,
                 *, mask: int = MASK, below: bool = True) -> None:
        self._root = root
        self._mask = mask
        self._below = below  # False: `root` alone, never a folder below it
        self._top = Path(root)
        self._skip = skip
        self._sink = sink
        self._closed = closed
        self._paths: dict[int, str] = {}  # each watch's folder, as it is now
        self._moves: dict[int, str] = {}  # a folder's IN_MOVED_FROM, by cookie, till its pair
        self._lock = threading.Lock()  # `close` against the descriptors' closing
        self._fd = int(_libc().inotify_init1(_CLOEXEC))
        if self._fd < 0:
            raise _failed("inotify_init1")
        try:
            self._wake_r, self._wake_w = os.pipe()
        except OSError:
            os.close(self._fd)
            raise

    def run(self, ready: Callable[[TreeWatch], None]) -> None:
        """The walk (`ready` told after it), then the reading, on the caller's thread."""
        try:
            self._add(self._root, announce=False)
            ready(self)
            poller = select.poll()
            poller.register(self._fd, select.POLLIN)
            poller.register(self._wake_r, select.POLLIN)
            while not self._closed.is_set():
                poller.poll()
                if self._closed.is_set():
                    break
                with contextlib.suppress(BlockingIOError):
                    self._handle(os.read(self._fd, _BUFFER))
        finally:
            with self._lock:
                for fd in (self._fd, self._wake_r, self._wake_w):
                    os.close(fd)
                self._fd = -1

    def close(self) -> None:
        """Wakes `run` (`closed` set by the caller first); never waits."""
        with self._lock:
            if self._fd >= 0:
                os.write(self._wake_w, b"!")

    def _handle(self, data: bytes) -> None:
        offset = 0
        while offset + _HEADER.size <= len(data):
            wd, mask, cookie, size = _HEADER.unpack_from(data, offset)
            name = data[offset + _HEADER.size:offset + _HEADER.size + size].rstrip(b"\0")
            offset += _HEADER.size + size
            self._event(wd, mask, cookie, os.fsdecode(name))
        for source in self._moves.values():  # moved out, or into a skipped folder
            self._drop(source)
        self._moves.clear()

    def _event(self, wd: int, mask: int, cookie: int, name: str) -> None:
        if mask & _Q_OVERFLOW:
            self._overflowed()
        elif mask & _IGNORED:
            self._paths.pop(wd, None)
        elif name and (parent := self._paths.get(wd)) is not None:
            self._change(parent + os.sep + name, mask, cookie)

    def _change(self, path: str, mask: int, cookie: int) -> None:
        folder = bool(mask & _ISDIR)
        kind = next((kind for bit, kind in _KINDS if mask & bit), "modified")
        if folder and kind == "modified":
            return  # a folder's own modify or attrib only echoes its entries' events
        self._sink.noticed(path, kind, folder)
        if not folder:
            return
        if mask & _CREATE:
            self._grow(path)
        elif mask & _MOVED_FROM:
            self._moves[cookie] = path
        elif mask & _MOVED_TO:
            self._arrived(self._moves.pop(cookie, None), path)

    def _arrived(self, source: str | None, path: str) -> None:
        if source is None:
            self._grow(path)  # from outside the watch: new to it
        elif path in self._skip:
            self._drop(source)
        else:
            self._rename(source, path)

    def _grow(self, path: str) -> None:
        if path in self._skip or not self._below:
            return
        try:
            self._add(path, announce=True)
        except OSError:  # the watch limit: changes in it go unseen
            self._sink.lose()

    def _overflowed(self) -> None:
        """Events were lost, folders made among them too: told, and the tree walked again."""
        self._sink.lose()
        self._moves.clear()
        with contextlib.suppress(OSError):
            self._add(self._root, announce=False)

    def _add(self, top: str, announce: bool) -> None:
        """Watch `top` and the folders below it, each opened without following a link; with
        `announce`, each name found is told as made. A folder is matched to the inode its
        parent listed, so a link swapped in on the way never leads the walk outside."""
        pending: list[tuple[str, tuple[int, int] | None]] = [(top, None)]
        while pending and not self._closed.is_set():
            path, inode = pending.pop()
            fd = self._open(path, inode)
            if fd < 0:
                continue
            try:
                if self._watch(fd, path) and self._below:
                    pending.extend(self._listed(fd, path, announce))
            finally:
                os.close(fd)

    def _listed(self, fd: int, path: str,
                announce: bool) -> list[tuple[str, tuple[int, int] | None]]:
        found: list[tuple[str, tuple[int, int] | None]] = []
        with contextlib.suppress(OSError), os.scandir(fd) as entries:
            for entry in entries:
                child = path + os.sep + entry.name
                folder = entry.is_dir(follow_symlinks=False)
                if announce:
                    self._sink.noticed(child, "created", folder)
                if folder and child not in self._skip:
                    with contextlib.suppress(OSError):
                        stat = entry.stat(follow_symlinks=False)  # fstatat on `fd`
                        found.append((child, (stat.st_dev, stat.st_ino)))
        return found

    def _open(self, path: str, inode: tuple[int, int] | None) -> int:
        """fsio.open_dir opens each folder on the way, 2.3x the time of one open here (17,000
        folders: 1.0 s against 0.43 s): it opens the top, the others are checked this way."""
        try:
            if inode is None:
                return open_dir(self._top, os.path.relpath(path, self._root))
            fd = os.open(path, _DIR)
        except OSError:  # gone meanwhile, a link swapped in, not ours to read
            return -1
        stat = os.fstat(fd)
        if (stat.st_dev, stat.st_ino) != inode:
            os.close(fd)
            return -1
        return fd

    def _watch(self, fd: int, path: str) -> bool:
        wd = int(_libc().inotify_add_watch(self._fd, f"/proc/self/fd/{fd}".encode(),
                                            self._mask))
        if wd < 0:
            if ctypes.get_errno() == errno.ENOSPC:
                raise OSError(errno.ENOSPC, "inotify watch limit reached")
            return False  # gone meanwhile, or not ours to read
        self._paths[wd] = path
        return True

    def _rename(self, source: str, path: str) -> None:
        for wd, old in list(self._paths.items()):
            if old == source or old.startswith(source + os.sep):
                self._paths[wd] = path + old[len(source):]

    def _drop(self, source: str) -> None:
        for wd, old in list(self._paths.items()):
            if old == source or old.startswith(source + os.sep):
                del self._paths[wd]
                _libc().inotify_rm_watch(self._fd, wd)
