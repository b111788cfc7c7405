"""Project files written: created or appended to only as plain files with one name, never
through a link; whole files replaced atomically, or placed under a new name only once whole."""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from aidd.fsio.dirs import LINK_ERRNOS, TMP_PREFIX, UnsafePathError, parent_fd, unlink

_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC  # a temp file
_UNNAMED = getattr(os, "O_TMPFILE", 0) | os.O_WRONLY | os.O_CLOEXEC  # Linux: a file, no name


def open_file(root: Path, path: Path, flags: int, mode: int = 0o644, *,
              create_dirs: bool = False) -> int:
    """Open (usually create) the file `path` for writing: never through a symlink, never a FIFO
    or device, never a file with another hard link (writing it would change that other name)."""
    dirfd = parent_fd(root, path, create_dirs)
    try:
        fd = os.open(path.name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode,
                     dir_fd=dirfd)
    except OSError as exc:
        if exc.errno in LINK_ERRNOS:
            raise UnsafePathError(path, "is a symlink (refused)") from None
        if exc.errno == errno.ENXIO:  # a FIFO without a reader (O_NONBLOCK)
            raise UnsafePathError(path, "is not a regular file") from None
        raise
    finally:
        os.close(dirfd)
    try:
        _check_plain(fd, path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_plain(fd: int, path: Path) -> None:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePathError(path, "is not a regular file")
    if info.st_nlink > 1:
        raise UnsafePathError(path, "has other hard links (refused)")


def open_append(root: Path, path: Path) -> int:
    """An O_APPEND fd on `path` (created 0644), for logs and events."""
    return open_file(root, path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)


def write_all(fd: int, data: bytes) -> None:
    """`os.write` until every byte is written (a short write is not an error)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_atomic(path: Path, data: bytes | str, mode: int | None = None, *,
                 root: Path) -> None:
    """Replace `path` with `data` so a reader (or a crash) sees the old or the new file."""
    with atomic_file(root, path, mode) as out:
        out.file.write(data.encode() if isinstance(data, str) else data)


class AtomicFile:
    """The temp file `atomic_file` yields: write through `file`; set `times_ns` to give the
    result those (atime, mtime), or `discard()` to leave the old file as it is."""

    def __init__(self, file: BinaryIO, mode: int) -> None:
        self.file = file
        self.mode = mode
        self.times_ns: tuple[int, int] | None = None
        self.discarded = False

    def discard(self) -> None:
        self.discarded = True


@contextlib.contextmanager
def atomic_file(root: Path, path: Path, mode: int | None = None) -> Iterator[AtomicFile]:
    """A temp file next to `path` (below `root`, reached without following a link) that
    replaces `path` when the block ends: written, fsynced, given `mode` (default: the old
    file's, else 0644), renamed. A reader (or a crash) sees the old or the new file; an
    exception or `discard()` leaves the old one and removes the temp file. The rename replaces
    a planted symlink or hard link itself, never what it points to (LAY-12)."""
    dirfd = parent_fd(root, path, create=False)
    try:
        tmp = TMP_PREFIX + os.urandom(6).hex()  # what secrets.token_hex does, unimported
        fd = os.open(tmp, _NEW, 0o600, dir_fd=dirfd)
        try:
            with os.fdopen(fd, "wb") as file:
                out = AtomicFile(file, _old_mode(dirfd, path.name) if mode is None else mode)
                yield out
                if not out.discarded:
                    _finish(file, out)
            if out.discarded:
                os.unlink(tmp, dir_fd=dirfd)
            else:
                os.rename(tmp, path.name, src_dir_fd=dirfd, dst_dir_fd=dirfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dirfd)
            raise
    finally:
        os.close(dirfd)


def place(root: Path, tmp_dir: Path, path: Path, data: bytes, mode: int, *,
          replace: bool) -> bool:
    """`data` named `path` (no link followed) only once whole, so a kill leaves nothing in
    `path`'s folder: a new name is given to an unnamed file (O_TMPFILE), else (a name there
    to replace, no unnamed files) a temp file in `tmp_dir` is renamed to it (`replace`) or
    linked. Unsynced, as git's refs. False: `path` was there and is kept (`replace=False`)."""
    dst = parent_fd(root, path, create=True)
    try:
        named = _name_unnamed(dst, path.name, data, mode) if not replace or _missing(
            dst, path.name) else None
        if named is not None and (named or not replace):
            return named  # else there meanwhile: replaced, by a rename
        tmp = f"{TMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}"  # whose: for a later clean-up
        # A folder that holds both (status.md's) is opened once (issue 33).
        src = dst if tmp_dir == path.parent else parent_fd(root, tmp_dir / "x", create=True)
        renamed = False
        try:
            with os.fdopen(os.open(tmp, _NEW, mode, dir_fd=src), "wb") as file:
                file.write(data)
            with contextlib.suppress(FileExistsError):
                (os.rename if replace else os.link)(tmp, path.name, src_dir_fd=src,
                                                    dst_dir_fd=dst)
                renamed = replace
                return True
            return False
        finally:
            if not renamed:  # linked, or it failed
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=src)
            if src != dst:
                os.close(src)
    finally:
        os.close(dst)


def _missing(dirfd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dirfd, follow_symlinks=False)
    except FileNotFoundError:
        return True
    return False


def _name_unnamed(dirfd: int, name: str, data: bytes, mode: int) -> bool | None:
    """`data` in an unnamed file of the folder, then named `name`; False: `name` exists. None:
    no unnamed files on this file system (O_TMPFILE), or no /proc to name one through."""
    try:
        fd = os.open(".", _UNNAMED, mode, dir_fd=dirfd)
    except OSError:
        return None
    try:
        write_all(fd, data)
        os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dirfd, follow_symlinks=True)
    except FileExistsError:
        return False
    except FileNotFoundError:
        return None
    finally:
        os.close(fd)
    return True


class Rewriter:
    """`path` (below `root`) replaced whole again and again, as `place` replaces it (a temp file
    renamed over it), but with no new file each time: the file `path` named is kept under a
    temp name (a second link, made before the rename) and written over in place as the next
    text's temp file. A new file, and freeing the one it replaced, were most of status.md's
    ~0.6 ms an attempt (issue 33). The kept file is opened as `open_file` opens any (no link
    followed, a regular file with no other name), else a new one is made. A reader opening
    `path` sees the old text or the new, whole; one keeping it open across two writes sees it
    change. Removed by `close`, after a kill by the next run's clean-up of temp names."""

    def __init__(self, root: Path, path: Path) -> None:
        self._root, self._path = root, path
        self._kept: str | None = None  # the temp name of the file `path` named before
        self._names = itertools.count()
        self._lock = threading.Lock()  # writers on several threads (--parallel N's slots)

    def write(self, data: bytes | str) -> None:
        with self._lock:
            temp = self._filled(data.encode() if isinstance(data, str) else data)
            folder = parent_fd(self._root, self._path, create=False)
            try:
                kept = self._second_name(folder)
                try:
                    os.rename(temp, self._path.name, src_dir_fd=folder, dst_dir_fd=folder)
                except OSError:
                    for left in {temp, kept or temp}:
                        with contextlib.suppress(OSError):
                            os.unlink(left, dir_fd=folder)
                    raise
                self._kept = kept
            finally:
                os.close(folder)

    def close(self) -> None:
        """At the end: the kept file goes."""
        with self._lock:
            kept, self._kept = self._kept, None
            if kept is not None:
                with contextlib.suppress(OSError):
                    unlink(self._root, self._path.parent / kept)

    def _temp(self) -> str:
        return f"{TMP_PREFIX}{os.getpid()}-{self._path.stem}-{next(self._names)}"

    def _second_name(self, folder: int) -> str | None:
        """A temp name for the file `path` names now (replaced next), or None."""
        kept = self._temp()
        try:
            os.link(self._path.name, kept, src_dir_fd=folder, dst_dir_fd=folder,
                    follow_symlinks=False)
        except OSError:  # none yet, or not a file: the next write makes one
            return None
        return kept

    def _filled(self, data: bytes) -> str:
        """The temp name holding `data`: the kept file when it is still only ours."""
        folder, kept, self._kept = self._path.parent, self._kept, None
        if kept is not None:
            try:
                fd = open_file(self._root, folder / kept, os.O_WRONLY)
            except OSError:  # gone, replaced, linked elsewhere: not written
                with contextlib.suppress(OSError):
                    unlink(self._root, folder / kept)
            else:
                _fill(fd, data)
                return kept
        temp = self._temp()
        _fill(open_file(self._root, folder / temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644),
              data)
        return temp


def _fill(fd: int, data: bytes) -> None:
    """`data` as the whole file from its start (0644); then closed."""
    try:
        os.fchmod(fd, 0o644)
        write_all(fd, data)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def _finish(file: BinaryIO, out: AtomicFile) -> None:
    file.flush()
    fd = file.fileno()
    os.fsync(fd)
    os.fchmod(fd, out.mode)
    if out.times_ns is not None:
        os.utime(fd, ns=out.times_ns)


def _old_mode(dirfd: int, name: str) -> int:
    try:
        info = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
    except OSError:
        return 0o644
    return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else 0o644


def write_crash_file(root: Path, text: str) -> Path | None:
    """`.automaker/aidd-crash-<UTC time>-<pid>[-N].txt` holding `text`, never overwriting an
    earlier one; None when it could not be written whole (named only once whole: a full disk
    leaves no empty file named in a message)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    automaker = root / ".automaker"
    for n in range(100):
        path = automaker / f"aidd-crash-{stamp}-{os.getpid()}{f'-{n}' if n else ''}.txt"
        try:
            if place(root, automaker, path, text.encode("utf-8", "replace"), 0o600,
                     replace=False):
                return path
        except OSError:
            return None
    return None
