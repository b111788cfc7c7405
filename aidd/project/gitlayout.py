"""Whether a repository's layout keeps aidd's checkpoints inside the project (issue 27): git
follows `.git` links and `gitdir:` files, `commondir`, `objects/info/alternates` and symlinked
folders wherever they lead, so each is refused before git runs there. A refused project
repository means no checkpoints for the run; a refused private one is moved aside and made
afresh (it is aidd's own)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from aidd.fsio import read_file

# Entries of a git directory that must be plain (a link would lead git elsewhere).
_PLAIN = ("HEAD", "config", "index", "packed-refs", "objects", "refs", "info", "logs",
          "objects/info", "objects/pack", "refs/aidd")
# Files that make git read or write another repository's objects, refs or config.
_ELSEWHERE = ("commondir", "objects/info/alternates", "objects/info/http-alternates")
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1 or SHA-256
_BRANCH = re.compile(r"refs/heads/[A-Za-z0-9._/-]+")
_SMALL = 1 << 20  # a larger packed-refs is left to git


def own_problem(root: Path, top: Path, git_dir: Path) -> str | None:
    """Why the project's own repository (work tree `top`, git directory `git_dir`, both as
    git found them from `root`) may not keep checkpoints, or None."""
    dot_git = top / ".git"
    if dot_git.is_symlink():
        return f"{dot_git} is a symbolic link"
    real_top, real_dir = top.resolve(), git_dir.resolve()
    if not root.resolve().is_relative_to(real_top):
        return f"git's work tree {top} does not hold the project (core.worktree?)"
    if not real_dir.is_relative_to(real_top):
        return f"{dot_git} points outside the work tree, to {git_dir}"
    return layout_problem(real_dir)


def layout_problem(git_dir: Path) -> str | None:
    """Why this git directory's layout would lead git outside it, or None."""
    if git_dir.is_symlink():
        return f"{git_dir} is a symbolic link"
    for name in _ELSEWHERE:
        if os.path.lexists(git_dir / name):
            return f"{git_dir / name} names another repository"
    for name in _PLAIN:
        if (git_dir / name).is_symlink():
            return f"{git_dir / name} is a symbolic link"
    return _linked_inside(git_dir / "objects") or _linked_inside(git_dir / "refs", deep=True)


def _linked_inside(folder: Path, deep: bool = False) -> str | None:
    """A symbolic link among `folder`'s entries (all levels with `deep`; links not followed)."""
    if not folder.is_dir():
        return None
    for current, dirs, files in os.walk(folder):
        for name in (*dirs, *files):
            if (Path(current) / name).is_symlink():
                return f"{Path(current) / name} is a symbolic link"
        if not deep:
            return None
    return None


def head_commit(top: Path, git_dir: Path) -> str | None:
    """HEAD's commit as the repository's files plainly say it: a detached id, or a branch
    whose ref is a loose file or a line of a small packed-refs. None for anything else (an
    unborn branch, reftable, a symbolic chain, an odd name or file): then git is asked. One
    git run fewer per checkpoint; git still checks the id when a checkpoint names it."""
    head = _small_text(top, git_dir / "HEAD")
    if head is None or _OBJECT_ID.fullmatch(head):
        return head
    ref = head.removeprefix("ref: ")
    if ref == head or not _BRANCH.fullmatch(ref) or "/." in ref or ".." in ref:
        return None
    loose = _small_text(top, git_dir / ref)
    if loose is None:
        for line in (_small_text(top, git_dir / "packed-refs") or "").splitlines():
            found, _, name = line.partition(" ")
            if name == ref:
                loose = found
                break
    return loose if loose is not None and _OBJECT_ID.fullmatch(loose) else None


def _small_text(top: Path, path: Path) -> str | None:
    """A small regular file's text, stripped; None when missing, odd or too large."""
    try:
        return read_file(top, path, _SMALL).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
