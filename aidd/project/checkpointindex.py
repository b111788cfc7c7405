"""Where a checkpoint is built (project/checkpoints): the index, a copy of the user's or the one
the run's last checkpoint left when provably nothing else wrote it or the user's since (then it
still holds that checkpoint's tree, and `git add -v` names what changed since: issue 33); and
the private repository of a project that has none."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from aidd.fsio import make_dirs, open_file, open_read, unlink, write_atomic
from aidd.project.gitlayout import layout_problem

Signature = tuple[int, ...] | None
# The private repository's whole config, written by aidd every time it opens it.
_PRIVATE_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n"


class Repo(NamedTuple):
    git_dir: Path
    work_tree: Path
    private: bool
    # A linked worktree's (project/worktrees): the repository's own git directory, named to
    # git so the worktree's `commondir` file is not followed, and the folder holding both.
    common_dir: Path | None = None
    holder: Path | None = None

    @property
    def top(self) -> Path:
        """The folder fsio reads and writes the git directory below."""
        return self.holder or self.work_tree


def signature(path: Path) -> Signature:
    """A file's identity and stat data (None: missing or odd). git replaces an index by a
    rename, so a rewrite is a new inode even within one timestamp tick."""
    try:
        info = path.lstat()
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_mode)


def state(repo: Repo, index: Path) -> tuple[Signature, Signature]:
    """What `seed` compares: the index and the user's own."""
    return signature(index), signature(repo.git_dir / "index")


def seed(root: Path, repo: Repo, index: Path, kept: tuple[Signature, Signature] | None) -> bool:
    """Start from a copy of the user's index (its stat cache makes `add` fast; the user's file
    is never written), or keep `index` when it and the user's are as `kept` says the last
    checkpoint left them (True then). The private repository's own index is kept between
    checkpoints, unless something other than a plain file was planted in its place (a FIFO
    there would stall git, a link lead it out). OSError: UnsafePathError included."""
    same = kept is not None and kept == state(repo, index)
    make_dirs(root, index.parent)
    if repo.private:
        if index.is_symlink() or (index.exists() and not index.is_file()):
            unlink(root, index)
            return False
        return same
    if same:
        return True
    unlink(root, index)
    own = repo.git_dir / "index"
    if own.is_file():
        with open_read(repo.top, own) as src, os.fdopen(open_file(
                root, index, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as dst:
            shutil.copyfileobj(src, dst)
    return False


def make_private(root: Path, private: Path, init: Callable[[], object]) -> None:
    """The private repository at `private` (`init` makes it), made where no planted link leads
    elsewhere (fsio), and with aidd's own config: a copied project may carry one whose filters
    or includes would run or read what it names. One whose layout leads elsewhere is moved
    aside (the link itself, never what it points to) and made afresh. Raises OSError."""
    make_dirs(root, private.parent)
    if os.path.lexists(private) and layout_problem(private) is not None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        private.rename(f"{private}.unsafe-{stamp}")
    make_dirs(root, private)
    if not (private / "HEAD").is_file():
        init()
    write_atomic(private / "config", _PRIVATE_CONFIG, root=root)
