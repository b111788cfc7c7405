"""The git worktrees of `--parallel N` (docs/parallel.md): one per feature at work, on branch
`aidd/<feature-id>`, in a folder outside the project; made, listed, committed, removed, and
found again after a killed run. Every git run goes through project/git; the user's checkout,
HEAD, index and stash are never touched here."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from aidd.fsio import make_dirs, read_file, unlink, write_atomic
from aidd.project.approvals import data_home
from aidd.project.checkpoints import INDEX, CheckpointError, CheckpointStore
from aidd.project.featurescan import candidates, read_feature
from aidd.project.git import Git, GitError, which
from aidd.project.gitlayout import own_problem
from aidd.project.paths import ProjectPaths

BRANCH_PREFIX = "aidd/"
# A feature id that may name a branch and a folder: git's ref rules and the file system's
# are both met by this plain form; any other id (from an untrusted feature file) is refused.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_KEY_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
AUTOMAKER = ".automaker"
QUEUE = ".queue"  # the merge queue's own worktree, beside the features' ones


class WorktreeError(Exception):
    """A worktree could not be made, committed or removed (git failed, a refused layout)."""


def valid_id(feature_id: str) -> bool:
    """`feature_id` may become `aidd/<id>` and a folder name."""
    return (_ID.fullmatch(feature_id) is not None and ".." not in feature_id
            and not feature_id.endswith((".lock", ".")))


def branch_of(feature_id: str) -> str:
    if not valid_id(feature_id):
        raise WorktreeError(f"feature id {feature_id!r} cannot name a branch and a folder")
    return BRANCH_PREFIX + feature_id


def base_dir(root: Path, environ: Mapping[str, str], chosen: Path | None = None) -> Path:
    """Where this project's worktrees live: `<chosen or data>/worktrees/<name>-<hash>`, never
    inside the project (the agent-writable tree)."""
    real = os.path.realpath(root)
    key = (_KEY_CHARS.sub("-", Path(real).name).strip("-.") or "project") + "-" + \
        hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    base = Path(os.path.realpath(chosen or data_home(environ) / "worktrees")) / key
    if base.is_relative_to(real):
        raise WorktreeError(f"worktrees cannot live inside the project ({base})")
    return base


class Worktree(NamedTuple):
    feature_id: str
    path: Path
    git_dir: Path  # its own git directory, `<common>/worktrees/<name>`

    @property
    def branch(self) -> str:
        return BRANCH_PREFIX + self.feature_id


class Leftovers(NamedTuple):
    """What a killed run left, and what was done with it at the next start."""

    removed: tuple[str, ...]  # worktree folders removed (their work committed first)
    kept: tuple[str, ...]  # unmerged `aidd/*` branches, kept for the next attempt
    deleted: tuple[str, ...]  # branches already merged, deleted


class Worktrees:
    """The worktrees of one project, whose own repository must be at its top."""

    def __init__(self, root: Path, environ: Mapping[str, str], base: Path) -> None:
        self.root = root
        self.environ = dict(environ)
        self.base = base
        self.common = self._common_dir()

    def git(self) -> Git:
        """git on the project's own repository (with the user's index, read only here)."""
        return Git(self.root, self.environ, {"GIT_DIR": str(self.common)})

    def git_in(self, tree: Worktree) -> Git:
        """git on a worktree, its directories named by aidd, not read from its `.git` file."""
        return Git(tree.path, self.environ, {"GIT_DIR": str(tree.git_dir),
                                             "GIT_COMMON_DIR": str(self.common),
                                             "GIT_WORK_TREE": str(tree.path)})

    def create(self, feature_id: str, start: str = "HEAD") -> Worktree:
        """A worktree on `aidd/<id>`: the existing branch (a killed run's unmerged work), else a
        new one from `start`, the project's current commit."""
        branch = branch_of(feature_id)
        path = self.base / feature_id
        if os.path.lexists(path):
            raise WorktreeError(f"{path} exists already")
        self.base.mkdir(parents=True, exist_ok=True)  # the user's data directory: trusted
        commit = self._out("rev-parse", "--verify", "--quiet", f"{start}^{{commit}}")
        if self.resolve(f"refs/heads/{branch}"):
            self._out("worktree", "add", "--quiet", str(path), branch)
        else:
            self._out("worktree", "add", "--quiet", "-b", branch, str(path), commit)
        return self._found(feature_id, path)

    def registered(self) -> list[Path]:
        """The folders of the worktrees registered under this project's folder."""
        out = self.git().run("worktree", "list", "--porcelain", "-z")
        if not out.ok:
            raise WorktreeError(f"git worktree list failed: {out.why}")
        paths = [Path(f.removeprefix("worktree ")) for f in out.out.decode(
            "utf-8", "surrogateescape").split("\0") if f.startswith("worktree ")]
        return [path for path in paths if path.parent == self.base]

    def queue(self, start: str) -> Worktree:
        """The merge queue's own worktree, detached at `start` (made on first use)."""
        path = self.base / QUEUE
        if not path.is_dir():
            self.base.mkdir(parents=True, exist_ok=True)
            self._out("worktree", "add", "--quiet", "--detach", str(path), start)
        return self._found(QUEUE, path)

    def drop_queue(self) -> None:
        """The merge queue's worktree removed, when the slots are done (made again on use)."""
        path = self.base / QUEUE
        if path in self.registered():
            self._out("worktree", "remove", "--force", str(path))

    def listed(self) -> list[Worktree]:
        """The features' worktrees under this project's folder, whatever their branch."""
        trees = []
        for path in self.registered():
            if valid_id(path.name):
                with contextlib.suppress(WorktreeError):  # unregistered meanwhile
                    trees.append(self._found(path.name, path))
        return trees

    def commit(self, tree: Worktree, message: str) -> str | None:
        """Commit what the agent left uncommitted on the worktree's branch (its tree as a
        checkpoint records it, no runtime file, no ignored metadata forced in); the worktree
        is put back on its branch with its index at that commit, its files untouched. The
        new commit, or None when nothing changed."""
        store = CheckpointStore.of_worktree(tree.path, tree.git_dir, self.common, self.environ)
        try:
            snapshot = store.tree(tree.path / INDEX, force_metadata=False,
                                  leave_out=() if self.tracks_metadata() else (AUTOMAKER,))
        except CheckpointError as exc:
            raise WorktreeError(f"{tree.path}: {exc}") from None
        finally:
            with contextlib.suppress(OSError):  # UnsafePathError: a link planted there
                unlink(tree.path, tree.path / INDEX)
        ref = f"refs/heads/{tree.branch}"
        old = self.resolve(ref)
        git = self.git_in(tree)
        parent = old or self.resolve("HEAD", git)  # the agent deleted its branch
        if not parent:
            raise WorktreeError(f"{tree.path}: neither {tree.branch} nor its HEAD is a commit")
        made = None
        if snapshot != self.resolve(f"{parent}^{{tree}}"):
            made = self._out("commit-tree", snapshot, "-p", parent, "-m", message,
                             git=store.git_at(tree.path / INDEX))
        if (made or parent) != old:
            self._out("update-ref", ref, made or parent, old)
        self._out("symbolic-ref", "HEAD", ref, git=git)
        self._out("reset", "--quiet", git=git)
        return made

    def tracks_metadata(self) -> bool:
        """The project's commit tracks files under `.automaker/`: its feature files travel with
        the merge; else they travel by copy (`seed`, and back after a merge)."""
        return bool(self._out("ls-tree", "--name-only", "HEAD", "--", AUTOMAKER))

    def seed(self, tree: Worktree) -> list[str]:
        """The project's feature metadata copied into a new worktree, so its agent sees the
        board as it is now, tracked or not; read as feature files are (no link out, no FIFO).
        The paths copied, relative."""
        paths, copied = ProjectPaths(self.root), []
        wanted = [Path(c) for c in candidates(paths)] + [paths.app_spec, paths.todo]
        for source in wanted:
            with contextlib.suppress(OSError):  # unreadable: the agent works without it
                data = read_feature(str(source), str(self.root))
                if data is not None:
                    target = tree.path / source.relative_to(self.root)
                    make_dirs(tree.path, target.parent)
                    write_atomic(target, data, root=tree.path)
                    copied.append(str(source.relative_to(self.root)))
        return sorted(copied)

    def remove(self, tree: Worktree) -> None:
        """The worktree's folder and registration; its branch stays."""
        self._out("worktree", "remove", "--force", str(tree.path))

    def is_merged(self, branch: str, into: str = "HEAD") -> bool:
        return self.git().run("merge-base", "--is-ancestor", f"refs/heads/{branch}",
                              into).ok

    def branches(self) -> list[str]:
        """Every `aidd/<id>` branch of the project whose id is a valid one."""
        out = self._out("for-each-ref", "--format=%(refname:strip=2)",
                        f"refs/heads/{BRANCH_PREFIX}")
        return [b for b in out.splitlines() if valid_id(b.removeprefix(BRANCH_PREFIX))]

    def clean_up(self) -> Leftovers:
        """At a start: a killed run's worktrees committed and removed; its merged branches
        deleted, its unmerged ones kept."""
        for tree in (t for t in self.listed() if t.path.is_dir()):
            with contextlib.suppress(WorktreeError):  # a broken one: still removed below
                self.commit(tree, f"aidd: {tree.feature_id}, left by a stopped run")
        removed = []
        for path in self.registered():  # the queue's own worktree too
            if path.is_dir():
                self._out("worktree", "remove", "--force", str(path))
            removed.append(str(path))
        self._out("worktree", "prune")
        kept, deleted = [], []
        current = self.git().run("symbolic-ref", "--quiet", "HEAD").text
        for branch in self.branches():
            if self.is_merged(branch) and current != f"refs/heads/{branch}":
                self._out("update-ref", "-d", f"refs/heads/{branch}")
                deleted.append(branch)
            else:
                kept.append(branch)
        return Leftovers(tuple(removed), tuple(kept), tuple(deleted))

    # -- git -------------------------------------------------------------------------------
    def _common_dir(self) -> Path:
        if which(self.environ) is None:
            raise WorktreeError("git not found on PATH")
        found = self._out("rev-parse", "--absolute-git-dir", "--show-toplevel",
                          git=Git(self.root, self.environ)).splitlines()
        if len(found) != 2 or Path(found[1]).resolve() != self.root.resolve():
            raise WorktreeError(f"{self.root} is not the top of its own git repository")
        problem = own_problem(self.root, Path(found[1]), Path(found[0]))
        if problem is not None:
            raise WorktreeError(problem)
        return Path(found[0])

    def _found(self, feature_id: str, path: Path) -> Worktree:
        """The worktree at `path`, its git directory found from the project's side: the one
        under `<common>/worktrees/` whose `gitdir` names `path`."""
        admin = self.common / "worktrees"
        wanted = str(path / ".git")
        for entry in sorted(admin.iterdir()) if admin.is_dir() else []:
            if entry.is_symlink():
                continue
            with contextlib.suppress(OSError):  # gone, a link or a FIFO planted: not it
                named = read_file(self.root, entry / "gitdir", 4096)
                if named.decode("utf-8", "surrogateescape").strip() == wanted:
                    return Worktree(feature_id, path, entry)
        raise WorktreeError(f"{path} is not a worktree of {self.root}")

    def committed(self, rel: str) -> bytes | None:
        """The file at `rel` in the project's commit, or None (not tracked, git failed)."""
        try:
            done = self.git().run("show", f"HEAD:{rel}")
        except GitError:
            return None
        return done.out if done.ok else None

    def resolve(self, name: str, git: Git | None = None) -> str:
        """The object `name` names, or "" (none, or git failed)."""
        try:
            done = (git or self.git()).run("rev-parse", "--verify", "--quiet", name)
        except GitError:
            return ""
        return done.text if done.ok else ""

    def _out(self, *args: str, git: Git | None = None) -> str:
        try:
            return (git or self.git()).out(*args)
        except GitError as exc:
            raise WorktreeError(str(exc)) from None
