"""Copies into the project that never overwrite: scaffolding (LAY-21), artifacts (LAY-23), and
the spec copy of initializer iterations (LAY-22)."""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path

from aidd.fsio import make_dirs, read_file, write_atomic
from aidd.project.paths import ProjectPaths
from aidd.resources import data_dir

SPEC_LIMIT = 10 << 20  # a spec is prose for a model's context window, never gigabytes

# Nothing here follows a symlink it finds in the project: an existing entry (a link included) is
# left alone, so no copy can land outside the project (REL-4).

PLACEHOLDER = ".gitkeep"


def _copy_new(root: Path, src: Path, dst: Path, created: list[str], rel: str,
              skip: frozenset[str]) -> None:
    """Copy `src` to `dst` (a path that does not exist yet), recursively, keeping mode bits."""
    info = src.lstat()
    if stat.S_ISDIR(info.st_mode):
        make_dirs(root, dst)
        created.append(rel + "/")
        _merge(root, src, dst, created, rel, skip)
    elif stat.S_ISREG(info.st_mode):
        write_atomic(dst, src.read_bytes(), mode=stat.S_IMODE(info.st_mode), root=root)
        created.append(rel)


def _merge(root: Path, src: Path, dst: Path, created: list[str], rel: str,
           skip: frozenset[str]) -> None:
    """Copy the children of `src` into the real directory `dst`, never replacing anything."""
    for child in sorted(src.iterdir()):
        if child.name in skip or child.is_symlink():
            continue
        target = dst / child.name
        child_rel = f"{rel}/{child.name}" if rel else child.name
        if not os.path.lexists(target):
            _copy_new(root, child, target, created, child_rel, skip)
        elif child.is_dir() and target.is_dir() and not target.is_symlink():
            _merge(root, child, target, created, child_rel, skip)


def copy_scaffolding(root: Path, source: Path | None = None) -> list[str]:
    """Copy every entry of `scaffolding/` (dotfiles too) that the project lacks (LAY-21).

    Returns the project-relative paths created (directories end with `/`), for aidd-state.json.
    """
    created: list[str] = []
    root.mkdir(parents=True, exist_ok=True)
    _merge(root, source or data_dir("scaffolding"), root, created, "", frozenset())
    return created


def copy_artifacts(paths: ProjectPaths, source: Path | None = None) -> list[str]:
    """Copy each top-level entry of `artifacts/` whose name is free in `.automaker/` (LAY-23).

    Returns the names copied. `.gitkeep` placeholders are not copied; their directories are.
    """
    automaker = paths.automaker
    if automaker.is_symlink() and not _inside(automaker, paths.root):
        return []
    automaker.mkdir(parents=True, exist_ok=True)
    copied: list[str] = []
    for entry in _shipped_artifacts() if source is None else _artifacts(source):
        if os.path.lexists(automaker / entry.name):
            continue
        _copy_new(paths.root, entry, automaker / entry.name, [], entry.name, _SKIP)
        copied.append(entry.name)
    return copied


_SKIP = frozenset({PLACEHOLDER})


def _artifacts(source: Path) -> tuple[Path, ...]:
    return tuple(e for e in sorted(source.iterdir()) if e.name not in _SKIP and not e.is_symlink())


@functools.cache
def _shipped_artifacts() -> tuple[Path, ...]:
    """aidd's own artifacts, listed once a process (every attempt asks: issue 33)."""
    return _artifacts(data_dir("artifacts"))


def _inside(path: Path, root: Path) -> bool:
    real_root = root.resolve()
    return real_root in path.resolve().parents


def spec_differs(spec: Path, paths: ProjectPaths) -> bool:
    """app_spec.txt is there and holds other bytes than the user's spec (the project's file
    read through fsio: no link out, no FIFO, capped at the spec's own size limit)."""
    dest = paths.app_spec
    if not dest.exists() and not dest.is_symlink():
        return False
    try:
        return read_file(paths.root, dest, SPEC_LIMIT) != spec.read_bytes()
    except OSError:
        return True


def copy_spec(spec: Path, paths: ProjectPaths) -> bool:
    """Make app_spec.txt a byte-exact copy of `spec` for an initializer iteration (LAY-22);
    False when both are the same file."""
    dest = paths.app_spec
    try:
        if dest.exists() and spec.samefile(dest):
            return False
    except OSError:
        pass  # e.g. a dangling link at `dest`: replacing it is fine
    # Never wider than the source: a 0600 spec stays 0600 (issue 13 item 2).
    mode = stat.S_IMODE(spec.stat().st_mode) & 0o666
    if dest.is_file() and not dest.is_symlink():
        mode &= stat.S_IMODE(dest.stat().st_mode)
    write_atomic(dest, spec.read_bytes(), mode=mode, root=paths.root)
    return True
