"""Copying into the project for the copy lists: one file, or a directory tree mirrored (LAY-35),
every file through `fsio.atomic_file`; a source that is a FIFO or device is refused."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from aidd.fsio import atomic_file, open_regular

# Never copied into a copydirs target and never deleted from it, at any depth (LAY-35).
EXCLUDED = frozenset(
    {
        "node_modules",
        ".git",
        "bun.lock",
        "bun.lockb",
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
    }
)
_CHUNK = 1024 * 1024


def copy_file(src: Path, dst: Path, root: Path) -> None:
    """Stream `src` over `dst` (below `root`) atomically, keeping mode bits and mtime."""
    with open_regular(src) as inp:  # a FIFO or a device refused, never waited on
        info = os.fstat(inp.fileno())
        with atomic_file(root, dst, stat.S_IMODE(info.st_mode)) as out:
            shutil.copyfileobj(inp, out.file, _CHUNK)
            out.times_ns = (info.st_atime_ns, info.st_mtime_ns)


def _same(src: os.DirEntry[str], dst: Path) -> bool:
    try:
        a, b = src.stat(follow_symlinks=False), dst.lstat()
    except OSError:
        return False
    return stat.S_ISREG(b.st_mode) and a.st_size == b.st_size and a.st_mtime_ns == b.st_mtime_ns


@dataclass
class MirrorStats:
    copied: int = 0
    deleted: int = 0


def _remove(path: Path, stats: MirrorStats) -> None:
    """Delete a file, symlink or directory, keeping excluded names inside it (LAY-35)."""
    if path.is_symlink() or not path.is_dir():
        path.unlink()
        stats.deleted += 1
        return
    for child in path.iterdir():
        if child.name not in EXCLUDED:
            _remove(child, stats)
    with contextlib.suppress(OSError):  # still holds excluded entries: keep it
        path.rmdir()


def _make_dir(path: Path, stats: MirrorStats) -> None:
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        _remove(path, stats)
    path.mkdir(exist_ok=True)


def mirror(src: Path, dst: Path, root: Path, stats: MirrorStats) -> None:
    """Make `dst` (below `root`) hold exactly the regular files of `src`, minus EXCLUDED."""
    _make_dir(dst, stats)
    wanted: set[str] = set()
    with os.scandir(src) as entries:
        for entry in entries:
            if entry.name in EXCLUDED or entry.is_symlink():
                continue
            target = dst / entry.name
            if entry.is_dir(follow_symlinks=False):
                wanted.add(entry.name)
                mirror(Path(entry.path), target, root, stats)
            elif entry.is_file(follow_symlinks=False):
                wanted.add(entry.name)
                if not _same(entry, target):
                    if target.is_symlink() or target.is_dir():
                        _remove(target, stats)
                    copy_file(Path(entry.path), target, root)
                    stats.copied += 1
    for child in list(dst.iterdir()):
        if child.name not in wanted and child.name not in EXCLUDED:
            _remove(child, stats)
