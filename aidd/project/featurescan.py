"""Finding and reading every `features/**/feature.json` fast, never leaving the project (FEA-21)."""

from __future__ import annotations

import errno
import os
import stat

from aidd.fsio import FileTooLargeError
from aidd.project import limits
from aidd.project.paths import ProjectPaths

# Symlinked directories are not walked; a symlinked feature.json is read only when it leads to a
# regular file inside the project (REL-4).

FEATURE_FILE = "feature.json"
_CHUNK = 1 << 16
_OPEN_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK  # O_NONBLOCK: a FIFO never blocks us
_LINK_ERRNOS = (errno.ELOOP, errno.EMLINK)  # O_NOFOLLOW on a symlink: Linux/macOS, FreeBSD


def candidates(paths: ProjectPaths) -> list[str]:
    """Where a feature.json is or may be, in no order; [] when `features/` is missing.

    A directory with a link count of 2 has no subdirectory (the leaf optimisation of find(1)),
    so its feature.json is opened directly instead of listing the directory: that saves a third
    of the walk. Any other count (btrfs reports 1) just means "list it".
    """
    top = str(paths.features)
    if not paths.features.is_dir() or not inside(os.path.realpath(top), project_root(paths)):
        return []
    found: list[str] = []
    stack = [top]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if _is_leaf(entry):
                    found.append(entry.path + os.sep + FEATURE_FILE)
                else:
                    stack.append(entry.path)
            elif entry.name == FEATURE_FILE:
                found.append(entry.path)  # `read_feature` decides about links and odd files
    return found


def _is_leaf(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.stat(follow_symlinks=False).st_nlink == 2
    except OSError:
        return False


def project_root(paths: ProjectPaths) -> str:
    return os.path.realpath(paths.root)


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def read_feature(path: str, root: str) -> bytes | None:
    """The bytes of the feature file at `path`; None when there is none to read there (missing,
    not a regular file, or a symlink leading out of the project `root`). Raises OSError when the
    file exists but cannot be read."""
    try:
        fd = os.open(path, _OPEN_FLAGS | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno not in _LINK_ERRNOS:
            raise
        target = os.path.realpath(path)
        if not inside(target, root):
            return None
        try:
            fd = os.open(target, _OPEN_FLAGS)
        except FileNotFoundError:
            return None
    return _read_regular(fd, path)


def _read_regular(fd: int, path: str) -> bytes | None:
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        if info.st_size > limits.FEATURE:  # never load a planted gigabyte (issue 13 item 14)
            raise FileTooLargeError(path, limits.FEATURE)
        chunk = os.read(fd, _CHUNK)
        if len(chunk) < _CHUNK:
            return chunk
        parts = [chunk]
        while chunk:
            chunk = os.read(fd, _CHUNK)
            parts.append(chunk)
        return b"".join(parts)
    finally:
        os.close(fd)
