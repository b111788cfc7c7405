"""Whether a repository's layout keeps aidd's checkpoints inside the project (issue 27): git
follows `.git` links and `gitdir:` files, `commondir`, `objects/info/alternates` and symlinked
folders wherever they lead, so each is refused before git runs there. A refused project
repository means no checkpoints for the run; a refused private one is moved aside and made
afresh (it is aidd's own)."""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple, TypeVar, cast

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


# A config file changed this recently may change again within its timestamp's granularity
# (a second on some file systems) unseen by its stat: it is listed again rather than trusted.
_RACY_NS = 3_000_000_000


class ConfigFiles(NamedTuple):
    """The repository config git would read in one place (issue 27, issue 33)."""

    problem: str | None  # why git would block on opening one of them, or None
    # (path, device, inode, size, mtime, ctime) of each file, and of each git directory's
    # HEAD (an `includeIf "onbranch:"` follows it); equal signatures: the same config. None
    # when it cannot tell: an include not followed, no repository found, a racy file.
    signature: tuple[object, ...] | None


def config_files(cwd: Path, repo: Mapping[str, str], home: str) -> ConfigFiles:
    """The config of git run in `cwd` (on `repo`'s GIT_DIR/GIT_COMMON_DIR, else the
    repository found from `cwd`): the repository's config may include any path, and a FIFO
    there stalls every git run until its timeout (issue 27). An include that is not a regular
    file is refused; includes inside the repository or the work tree are followed (git's
    depth); one elsewhere is only stat'ed (and the signature is then None)."""
    dirs = _git_dirs(cwd, repo)
    seen: list[object] = [str(d) for d in dirs] or [None]
    for git_dir in dirs:
        seen.append(_stat_of(git_dir / "HEAD"))
        for name in ("config", "config.worktree"):
            if (problem := _includes(git_dir, git_dir / name, home, 0, seen)) is not None:
                return ConfigFiles(problem, None)
    racy = time.time_ns() - _RACY_NS
    trusted = None not in seen and all(not isinstance(each, tuple) or each[1] is None
                                       or max(each[4:]) < racy for each in seen)
    return ConfigFiles(None, tuple(seen) if trusted else None)


def _stat_of(path: Path, info: os.stat_result | None = None) -> tuple[object, ...]:
    if info is None:
        try:
            info = path.stat()
        except OSError:
            return (str(path), None)
    return (str(path), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns,
            info.st_ctime_ns)


# What a small file of the git directory said (a config's includes, HEAD, a ref), by its
# stat: read again only when that changed, or while it is racy (issue 33: a read through fsio
# costs a dozen system calls; git runs once or twice a checkpoint, each checked first).
_READ: dict[tuple[object, ...], object] = {}
_READ_KEPT = 64
_T = TypeVar("_T")


def remembered(kind: str, top: Path, path: Path, info: os.stat_result | None,
                read: Callable[[], _T]) -> _T:
    """`read()`, or what it gave for this `kind` of reading of this file with this very stat,
    outside the racy window (a rewrite within one timestamp tick, same size, would go
    unseen)."""
    if info is None or max(info.st_mtime_ns, info.st_ctime_ns) >= time.time_ns() - _RACY_NS:
        return read()
    key = (kind, str(top), *_stat_of(path, info))
    if key not in _READ:
        if len(_READ) >= _READ_KEPT:
            _READ.clear()
        _READ[key] = read()
    return cast(_T, _READ[key])


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


def _includes(top: Path, config: Path, home: str, depth: int,
              seen: list[object]) -> str | None:
    """Why git would stall on `config` or what it includes, or None; each file's stat is
    added to `seen`, and a None for one not followed."""
    try:
        info = config.stat()
    except OSError:
        seen.append((str(config), None))
        return None  # git skips a missing include
    seen.append(_stat_of(config, info))
    if not stat.S_ISREG(info.st_mode):
        return f"{config} is not a regular file (git would wait on it)"
    if depth >= _INCLUDE_DEPTH:
        seen.append(None)
        return None
    targets = remembered("includes", top, config, info, lambda: _read_includes(top, config))
    if targets is None:  # followed only inside `top`: aidd reads no file elsewhere
        seen.append(None)
        return None
    for target in targets:
        path = Path(home, target[2:]) if target.startswith("~/") else config.parent / target
        if (problem := _includes(top, path, home, depth + 1, seen)) is not None:
            return problem
    return None


def _read_includes(top: Path, config: Path) -> list[str] | None:
    try:
        text = read_file(top, config, _SMALL).decode("utf-8", "replace")
    except OSError:
        return None
    return _include_paths(text)


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
        info = path.stat()
    except OSError:
        return None
    return remembered("text", top, path, info, lambda: _read_text(top, path))


def _read_text(top: Path, path: Path) -> str | None:
    try:
        return read_file(top, path, _SMALL).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
