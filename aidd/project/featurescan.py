"""Finding and reading every `features/<dir>/feature.json` fast, never leaving the project
(FEA-21)."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

from aidd.fsio import FileTooLargeError, write_atomic
from aidd.project import jsonfile, limits
from aidd.project.paths import ProjectPaths

# Symlinked directories are not walked; a symlinked feature.json is read only when it leads to a
# regular file inside the project (REL-4).

FEATURE_FILE = "feature.json"
_CHUNK = 1 << 16
_OPEN_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK  # O_NONBLOCK: a FIFO never blocks us
_LINK_ERRNOS = (errno.ELOOP, errno.EMLINK)  # O_NOFOLLOW on a symlink: Linux/macOS, FreeBSD


def candidates(paths: ProjectPaths) -> list[str]:
    """Where a feature.json may be, in no order: `features/<dir>/feature.json` for each real
    directory (AutoMaker's loader reads exactly these, issue 18); [] when `features/` is
    missing. `read_feature` decides about links and odd files."""
    top = _features_top(paths)
    if top is None:
        return []
    try:
        entries = list(os.scandir(top))
    except OSError:
        return []
    return [e.path + os.sep + FEATURE_FILE for e in entries if e.is_dir(follow_symlinks=False)]


def stray_files(paths: ProjectPaths) -> list[str]:
    """feature.json files neither tool reads: `features/feature.json` and any deeper than
    `features/<dir>/` (for `--check-features` to warn about), sorted. A `<dir>` with a link
    count of 2 has no subdirectory (find(1)'s leaf rule), so it is not listed; any other count
    (btrfs reports 1) just means "list it"."""
    top = _features_top(paths)
    if top is None:
        return []
    found: list[str] = []
    stack = [(top, 0)]
    while stack:
        where, depth = stack.pop()
        try:
            entries = list(os.scandir(where))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                # A feature's own folder without subfolders holds no stray: not listed.
                if depth != 0 or not _is_leaf(entry):
                    stack.append((entry.path, depth + 1))
            elif entry.name == FEATURE_FILE and depth != 1:
                found.append(entry.path)
    return sorted(found)


def _is_leaf(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.stat(follow_symlinks=False).st_nlink == 2
    except OSError:
        return False


def _features_top(paths: ProjectPaths) -> str | None:
    top = str(paths.features)
    if _plain_dirs(paths.automaker, paths.features):
        return top  # no link below the project: inside it, with no path resolved (issue 33)
    if not paths.features.is_dir() or not inside(os.path.realpath(top), project_root(paths)):
        return None
    return top


def _plain_dirs(*folders: Path) -> bool:
    """Each is a directory, none a link (so what is below the first stays below it)."""
    try:
        return all(stat.S_ISDIR(os.lstat(folder).st_mode) for folder in folders)
    except OSError:
        return False


def project_root(paths: ProjectPaths) -> str:
    return os.path.realpath(paths.root)


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)

def read_feature(path: str, root: str) -> bytes | None:
    """The bytes of the feature file at `path`; None when there is none to read there (missing,
    not a regular file, or a symlink leading out of the project `root`, as given or resolved).
    Raises OSError when the file exists but cannot be read."""
    try:
        fd = os.open(path, _OPEN_FLAGS | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno not in _LINK_ERRNOS:
            raise
        target = os.path.realpath(path)  # resolved: below `root` as given, `root` has no link
        if not (inside(target, root) or inside(target, os.path.realpath(root))):
            return None
        try:
            fd = os.open(target, _OPEN_FLAGS)
        except FileNotFoundError:
            return None
    return _read_regular(fd, path)


def reread(paths: ProjectPaths, location: str) -> dict[str, Any] | None:
    """The feature file at `location` as it is now (someone may have changed it since it was
    scanned): its object, or None when there is none to read there. Raises OSError when it
    cannot be read, ValueError when it is not JSON."""
    raw = read_feature(location, project_root(paths))
    data = jsonfile.loads(raw) if raw is not None else None
    return data if isinstance(data, dict) else None


def rewrite(paths: ProjectPaths, location: str, data: dict[str, Any]) -> None:
    """`data` as the feature file at `location`, every key in its place, written atomically
    and never through a link (fsio)."""
    write_atomic(paths.root / os.path.relpath(location, paths.root), dumps(data),
                 root=paths.root)


def dumps(data: dict[str, Any]) -> str:
    """A feature file's text as aidd writes one: two-space indents, UTF-8 as is."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


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
