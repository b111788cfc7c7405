"""Project files read: regular files whose real place is inside the project, opened without
blocking (a FIFO cannot hang aidd), capped in size."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from aidd.fsio.dirs import FileTooLargeError, UnsafePathError


def read_file(root: Path, path: Path, limit: int) -> bytes:
    """The bytes of a project file: it must be a regular file whose real location is inside
    `root` (a symlink may lead elsewhere in the project, never out of it) and at most `limit`
    bytes. Never blocks on a FIFO. Raises FileNotFoundError, UnsafePathError,
    FileTooLargeError or another OSError."""
    with open_read(root, path) as file:
        if os.fstat(file.fileno()).st_size > limit:
            raise FileTooLargeError(path, limit)
        return _read_capped(file.fileno(), path, limit)


def open_read(root: Path, path: Path) -> BinaryIO:
    """`path` opened for reading as a stream (a log cleaned chunk by chunk, the tail of a
    file), after `read_file`'s checks: a regular file whose real location is inside `root`,
    opened without blocking (a FIFO planted there is refused, never waited on). The caller
    bounds what it reads. Raises FileNotFoundError, UnsafePathError or another OSError."""
    return open_regular(path, lambda fd: _check_inside(fd, root, path))


def open_regular(path: Path, check: Callable[[int], None] | None = None) -> BinaryIO:
    """`path` opened without blocking and checked on the open file, with no stat/open race: a
    FIFO (which would block a read for ever) or a device is refused, then `check` (the open
    fd) may refuse it too. A file outside the project: `open_read` for one inside."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafePathError(path, "is not a regular file")
        if check is not None:
            check(fd)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _check_inside(fd: int, root: Path, path: Path) -> None:
    real = _real_path(fd, path)  # resolved: below `root` as given, `root` has no link
    if not (_inside(real, str(root)) or _inside(real, os.path.realpath(root))):
        raise UnsafePathError(path, "leads outside the project (refused)")


def _real_path(fd: int, path: Path) -> str:
    """Where the open file really is: /proc knows (no race); elsewhere ask realpath."""
    try:
        return str(Path(f"/proc/self/fd/{fd}").readlink())
    except OSError:
        return os.path.realpath(path)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _read_capped(fd: int, path: Path, limit: int) -> bytes:
    parts = []
    total = 0
    while chunk := os.read(fd, 1 << 16):
        total += len(chunk)
        if total > limit:  # it grew while we read
            raise FileTooLargeError(path, limit)
        parts.append(chunk)
    return b"".join(parts)
