"""Stuck detection: a fingerprint of the project outside .automaker/ (SUP-70); and one of the
feature metadata inside it, for no-work detection without checkpoints (issue 15)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from aidd.project.checkpoints import METADATA
from aidd.project.git import Git, GitError

_SKIP_DIRS = frozenset({".automaker", ".git", "node_modules"})


def fingerprint(root: Path, environ: Mapping[str, str]) -> str:
    """In a git work tree: HEAD plus (path, size, mtime) of changed and untracked files;
    elsewhere: (path, size, mtime) of every regular file. git runs isolated (project/git):
    no fsmonitor or filter of the project's runs inside aidd."""
    entries = _git_entries(root, environ)
    return _digest(_walk_entries(root) if entries is None else entries)


def metadata_fingerprint(root: Path) -> str:
    """(path, size, mtime) of the feature metadata a checkpoint records (`features/`,
    `todo.md`, `CHANGELOG.md`): marking a feature is work. No git call."""
    entries: list[str] = []
    for name in METADATA:
        path = root / name
        if path.is_dir() and not path.is_symlink():
            entries += [f"{name}/{entry}" for entry in _walk_entries(path)]
        else:
            entries.append(f"{name}\t{_stat(path)}")
    return _digest(entries)


def _digest(entries: list[str]) -> str:
    digest = hashlib.sha256()
    for entry in entries:
        digest.update(entry.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()


def _git_entries(root: Path, environ: Mapping[str, str]) -> list[str] | None:
    try:
        # The pathspec keeps git from even listing .automaker/ (thousands of logs after a
        # long run) and is relative to the project, which may be a subdirectory of the repo.
        proc = Git(root, environ, timeout=60).run(
            "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all",
            "--", ".", ":(exclude).automaker")
    except GitError:
        return None
    if not proc.ok:
        return None
    top = _toplevel(root)  # porcelain paths are relative to the repository's top level
    out: list[str] = []
    records = proc.out.decode("utf-8", "surrogateescape").split("\0")
    skip_next = False
    for record in records:
        if skip_next:  # the original path of a rename record
            skip_next = False
            continue
        if record.startswith("# branch.oid "):
            out.append(record)
        elif record[:2] in ("1 ", "2 ", "u ", "? "):
            skip_next = record.startswith("2 ")
            path = _record_path(record)
            out.append(f"{path}\t{_stat(top / path)}")
    return sorted(out)


def _toplevel(root: Path) -> Path:
    """The work tree git found for `root`: the nearest directory holding `.git`."""
    for folder in (root, *root.parents):
        if (folder / ".git").exists():
            return folder
    return root


def _record_path(record: str) -> str:
    fields = {"1 ": 8, "2 ": 9, "u ": 10, "? ": 1}[record[:2]]
    return record.split(" ", fields)[-1]


def _stat(path: Path) -> str:
    try:
        st = path.lstat()
    except OSError:
        return "gone"
    return f"{st.st_size}:{st.st_mtime_ns}"


def _walk_entries(root: Path) -> list[str]:
    out: list[str] = []
    for current, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
        for name in files:
            path = Path(current) / name
            try:
                st = path.lstat()
            except OSError:
                continue
            if not path.is_symlink():
                rel = path.relative_to(root).as_posix()
                out.append(f"{rel}\t{st.st_size}:{st.st_mtime_ns}")
    return sorted(out)
