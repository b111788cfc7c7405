"""Whether a repository's layout keeps aidd's checkpoints inside the project (issue 27): git
follows `.git` links and `gitdir:` files, `commondir`, `objects/info/alternates` and symlinked
folders wherever they lead, so each is refused before git runs there. A refused project
repository means no checkpoints for the run; a refused private one is moved aside and made
afresh (it is aidd's own)."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from aidd.fsio import read_file

# Entries of a git directory that must be plain (a link would lead git elsewhere).
_PLAIN = ("HEAD", "config", "index", "packed-refs", "objects", "refs", "info", "logs",
          "objects/info", "objects/pack", "refs/aidd")
# Files that make git read or write another repository's objects, refs or config.
_ELSEWHERE = ("commondir", "objects/info/alternates", "objects/info/http-alternates")
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1 or SHA-256
_BRANCH = re.compile(r"refs/heads/[A-Za-z0-9._/-]+")
_SMALL = 1 << 20  # a larger packed-refs is left to git; a larger config is not followed


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


# git's own cap on nested includes; a deeper chain is git's error, not a stall.
_INCLUDE_DEPTH = 10
_SECTION = re.compile(r'\s*\[\s*([A-Za-z][\w.-]*)(?:\s+"[^"]*")?\s*\]')
_PATH_KEY = re.compile(r"\s*path\s*=\s*(.*)", re.IGNORECASE)


def stall_problem(cwd: Path, repo: Mapping[str, str], home: str) -> str | None:
    """Why git run in `cwd` (on `repo`'s GIT_DIR/GIT_COMMON_DIR, else the repository found
    from `cwd`) would block on opening a file, or None: the repository's config may include
    any path, and a FIFO there stalls every git run until its timeout (issue 27). An
    include that is not a regular file is refused; includes inside the repository or the
    work tree are followed (git's depth); one elsewhere is only stat'ed."""
    dirs = _git_dirs(cwd, repo)
    for git_dir in dirs:
        for name in ("config", "config.worktree"):
            if (problem := _includes(git_dir, git_dir / name, home, 0)) is not None:
                return problem
    return None


def _git_dirs(cwd: Path, repo: Mapping[str, str]) -> list[Path]:
    if "GIT_DIR" in repo:
        return [Path(repo[key]) for key in ("GIT_DIR", "GIT_COMMON_DIR") if key in repo]
    for folder in (cwd, *cwd.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return [dot_git]
        if dot_git.is_file():  # a linked worktree or submodule: `gitdir: <path>`
            text = _small_text(folder, dot_git) or ""
            if not text.startswith("gitdir: "):
                return []
            git_dir = folder / text.removeprefix("gitdir: ")
            common = _small_text(git_dir, git_dir / "commondir")
            return [git_dir, *([git_dir / common] if common else [])]
    return []


def _includes(top: Path, config: Path, home: str, depth: int) -> str | None:
    try:
        mode = config.stat().st_mode
    except OSError:
        return None  # git skips a missing include
    if not stat.S_ISREG(mode):
        return f"{config} is not a regular file (git would wait on it)"
    if depth >= _INCLUDE_DEPTH:
        return None
    try:  # followed only inside `top`: aidd reads no file elsewhere
        text = read_file(top, config, _SMALL).decode("utf-8", "replace")
    except OSError:
        return None
    for target in _include_paths(text):
        path = Path(home, target[2:]) if target.startswith("~/") else config.parent / target
        if (problem := _includes(top, path, home, depth + 1)) is not None:
            return problem
    return None


def _include_paths(text: str) -> list[str]:
    """The `path` values of [include] and [includeIf "..."] sections (every condition taken
    as true: the check must not miss one git would follow)."""
    paths, inside = [], False
    for line in text.splitlines():
        if (section := _SECTION.match(line)) is not None:
            inside = section.group(1).lower() in ("include", "includeif")
            line = line[section.end():]
        if inside and (key := _PATH_KEY.match(line)) is not None:
            value = key.group(1).strip()
            value = (value[1:].split('"', 1)[0] if value.startswith('"')
                     else re.split(r"\s[#;]", value, maxsplit=1)[0].strip())
            if value:
                paths.append(value)
    return paths


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
