"""Checkpoints: the whole work tree recorded as a commit under a private ref
(`refs/aidd/checkpoints/<run>/<label>`), never touching the user's index, HEAD, branches,
stash or files: a temporary index file does the work (issue 15).

In a git work tree the project's own repository keeps the checkpoints; elsewhere a private
bare repository at `.automaker/checkpoints.git` does, with the project as its work tree.
Tracked, modified and untracked files are recorded, ignored ones are not, and neither are
aidd's runtime files; the feature metadata is recorded even where `.automaker/` is ignored.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

from aidd.fsio import unlink
from aidd.project import checkpointindex
from aidd.project.checkpointindex import Repo, Signature
from aidd.project.checkpointnames import REF_ROOT, Listed, is_run_id, parse_listing, run_of
from aidd.project.git import Done, Git, GitError, which
from aidd.project.gitlayout import head_commit, layout_problem, own_problem
from aidd.project.gitobjects import Objects
from aidd.project.gitrules import exclusions, rules_key
from aidd.project.gittrees import IndexTrees

PRIVATE_REPO = ".automaker/checkpoints.git"
INDEX = ".automaker/checkpoints.index"
# aidd's runtime files: never part of a checkpoint, never touched by a rollback.
ROLLBACK_INDEX = ".automaker/checkpoints.rollback.index"
RUNTIME = (".automaker/iterations", ".automaker/events.jsonl", ".automaker/aidd.lock",
           ".automaker/aidd-state.json", ".automaker/status.md", ".automaker/.stop",
           ".automaker/audits", PRIVATE_REPO, INDEX, f"{INDEX}.lock", ROLLBACK_INDEX,
           f"{ROLLBACK_INDEX}.lock")
RUNTIME_GLOBS = {".automaker/aidd-crash-*": ".automaker", "**/.aidd-tmp-*": "",
                 f"{PRIVATE_REPO}.unsafe-*": ".automaker"}  # one moved aside (_make_private)
# The metadata a rollback restores: recorded even when the user's .gitignore hides .automaker/.
METADATA = (".automaker/features", ".automaker/todo.md", ".automaker/CHANGELOG.md")
_EXCLUDES = exclusions(RUNTIME, RUNTIME_GLOBS)  # runtime files kept out of a checkpoint
# Who the checkpoint commits say made them: no git identity needs to be configured.
IDENTITY = {"GIT_AUTHOR_NAME": "aidd", "GIT_AUTHOR_EMAIL": "aidd@localhost",
             "GIT_COMMITTER_NAME": "aidd", "GIT_COMMITTER_EMAIL": "aidd@localhost"}
_AS = "aidd <aidd@localhost>"  # the same, in the commit objects aidd writes (project/gitobjects)
# `git add -v`'s report of one path it staged or removed: the changed files, no diff-tree.
_ADDED = re.compile(r"(?:add|remove) '(.*)'")


class CheckpointError(Exception):
    """A checkpoint could not be made (no git, a broken repository, a full disk): the run goes
    on without it."""


class RefusedError(CheckpointError):
    """The project's repository would lead git outside the project (a `.git` link or `gitdir:`
    file pointing elsewhere, `commondir`, alternates, linked folders): no checkpoints there."""


class Checkpoint(NamedTuple):
    label: str  # NNN, NNN-prekill or NNN-end
    ref: str
    commit: str
    files: int  # paths changed since the previous checkpoint of the run (or HEAD)
    tree: str  # the recorded tree: two checkpoints hold the same files when their trees match
    head: str | None = None  # the project's HEAD then (None: private repository, or no commit)


class CheckpointStore:
    """The checkpoints of one run in one project."""

    def __init__(self, root: Path, run_id: str, environ: Mapping[str, str]) -> None:
        self.root = root
        self.run_id = run_id
        self._env = dict(environ)  # project/git drops what would point git elsewhere
        self._repo: Repo | None = None
        self._last: str | None = None  # the run's previous checkpoint commit
        self._last_tree: str | None = None  # and its tree
        self._last_ref: str | None = None  # the ref written last, to `_last` usually
        self._diffed: tuple[str | None, str, list[str]] | None = None  # the last diff-tree run
        self._hidden: tuple[tuple[object, ...], tuple[str, ...]] | None = None  # _hidden_metadata
        self._objects: Objects | None = None  # where aidd writes commits and refs itself
        self._gits: dict[Path, Git] = {}  # `git_at`'s, by index
        # The private index as the last checkpoint left it, and the user's index it was copied
        # from: while both are unchanged, the index holds the last checkpoint's tree, so `add
        # -v` names what changed since (no diff-tree), and the copy is not made again.
        self._kept: tuple[tuple[Signature, Signature], str] | None = None  # and its tree
        self._added: list[str] | None = None  # the paths the last `tree` staged, when complete
        self._trees: IndexTrees | None = None  # the run's index's trees (project/gittrees)
        # The run's file watcher's count of changes (project/activity `quiet`), when it
        # watches this tree; with what it does not watch, as they were after the last snapshot.
        self.quiet: Callable[[], int | None] | None = None
        self._proved: tuple[int, tuple[object, ...]] | None = None
        self._listing: tuple[tuple[str, str, str], ...] = ()
        # A worktree's index goes after each checkpoint: its agent's own `git add -A` would
        # commit it on the branch, and a merge would bring it into the project.
        self._transient = False

    @classmethod
    def of_worktree(cls, work_tree: Path, git_dir: Path, common_dir: Path,
                    environ: Mapping[str, str]) -> CheckpointStore:
        """The store of a linked worktree outside the project (project/worktrees): its git
        directory and the repository's are named by the caller, never read from the worktree's
        `.git` file, which its agent may rewrite."""
        store = cls(work_tree, "", environ)
        store._repo = Repo(git_dir, work_tree, private=False, common_dir=common_dir,
                            holder=common_dir.parent)
        store._transient = True
        return store

    @property
    def repo(self) -> Repo:
        if self._repo is None:
            self._repo = self._open()
        return self._repo

    def git_at(self, index: Path) -> Git:
        """git on the checkpoints' repository, with `index` (made once: the same all run)."""
        if index not in self._gits:
            repo = self.repo
            common = {} if repo.common_dir is None else {"GIT_COMMON_DIR": str(repo.common_dir)}
            self._gits[index] = Git(self.root, self._env, {
                **IDENTITY, "GIT_DIR": str(repo.git_dir), "GIT_WORK_TREE": str(repo.work_tree),
                "GIT_INDEX_FILE": str(index), **common})
        return self._gits[index]

    def refusal(self) -> str | None:
        """Why this project's repository may keep no checkpoints, or None (nothing made)."""
        try:
            self._open(create=False)
        except RefusedError as exc:
            return str(exc)
        except CheckpointError:
            return None
        return None

    def record(self, label: str) -> Checkpoint:
        try:
            return self._record(label)
        finally:
            if self._transient and os.path.lexists(self.root / INDEX):
                unlink(self.root, self.root / INDEX)

    def _record(self, label: str) -> Checkpoint:
        env = self.git_at(self.root / INDEX)
        # The run's file watcher saw no change since the last snapshot began: its tree still.
        count = self.quiet() if self.quiet is not None and self._last is not None else None
        added: list[str] | None = []
        if count is not None and self._proved is not None and self._proved[0] == count and (
                self._proved[1] == self._unwatched()):
            tree = self._last_tree or ""
        else:
            self._proved = None
            tree = self.tree(self.root / INDEX)
            added, self._added = self._added, None
            self._proved = None if count is None else (count, self._unwatched())
        ref = f"{REF_ROOT}/{self.run_id}/{label}"
        # Which commit the project was on: the report names the commit an attempt made.
        head = None if self.repo.private else self._head(env)
        if self._last is not None and tree == self._last_tree:
            # Nothing changed since the last checkpoint (the usual case between one attempt's
            # end and the next one's start): name the same commit, two git runs fewer.
            self._set_ref(env, ref, self._last, same_as=self._last_ref)
            return Checkpoint(label, ref, self._last, 0, tree, head)
        parent = self._last or head
        # `add -v` named the changes against the index, which held the last checkpoint's tree.
        paths = sorted(set(added)) if added is not None and self._last else self._paths(
            env, parent, tree)
        self._diffed = (parent, tree, paths)
        files = len(paths)
        message = f"aidd checkpoint {self.run_id} {label}\n\nfiles: {files}\n"
        try:
            commit = self._objects_of(env).write_commit(tree, parent, message, _AS) or self.git(
                env, "commit-tree", tree, *(["-p", parent] if parent else []), stdin=message
                .encode())  # a repository that also maps its objects to a second hash
        except OSError as exc:  # UnsafePathError included: a planted link in the git directory
            raise CheckpointError(f"the commit of {label}: {exc}") from None
        self._set_ref(env, ref, commit)
        self._last, self._last_tree = commit, tree
        return Checkpoint(label, ref, commit, files, tree, head)

    def _unwatched(self) -> tuple[object, ...]:
        """What decides a checkpoint's tree beside the work tree's files (the watcher skips the
        git directory): the kept index, the user's (tracked files; the part outside a
        subfolder project), the ignore files, the config and attributes (line endings)."""
        repo = self.repo
        return (checkpointindex.state(repo, self.root / INDEX),
                rules_key(self.root, repo.work_tree, repo.git_dir, self._listing),
                *map(checkpointindex.signature, (repo.git_dir / "config",
                                                 repo.git_dir / "info" / "attributes")))

    def _set_ref(self, env: Git, ref: str, commit: str, same_as: str | None = None) -> None:
        """The ref written by aidd (project/gitobjects: from a temp folder outside refs/, or a
        link to `same_as`, the last ref); by `git update-ref` where that is not safe."""
        self._last_ref = None
        try:
            if self._objects_of(env).write_ref(ref, commit, same_as):
                self._last_ref = ref
                return
        except OSError as exc:
            raise CheckpointError(f"{ref}: {exc}") from None
        self.git(env, "update-ref", ref, commit)

    def _trees_of(self, env: Git, tree: str) -> IndexTrees | None:
        """The run's own index's trees, holding `tree`, where aidd writes objects itself."""
        objects = self._objects_of(env)
        if objects.loose:
            self._trees = self._trees or IndexTrees(self.root, self.root / INDEX, objects)
            self._trees.hold(tree)
        return self._trees

    def _objects_of(self, env: Git) -> Objects:
        """The repository's objects and refs, its temp folder cleaned once per store."""
        if self._objects is None:
            repo = self.repo
            listing = self._listing or env.pinned().listing or ()  # `tree` listed it, usually
            objects = Objects.of(repo.top, repo.common_dir or repo.git_dir, listing)
            objects.clean()
            self._objects = objects
        return self._objects

    def tree(self, index: Path, force_metadata: bool = True,
             leave_out: tuple[str, ...] = ()) -> str:
        """The work tree's tree now, as a checkpoint records it (runtime files left out, the
        metadata in even where .gitignore hides it), built in `index` (a file under the
        project) and written to the object store: no commit, no ref. A branch to merge
        (project/worktrees) forces no metadata in and leaves out `leave_out` (named in
        `_ignored`'s list): what the user's repository does not track must not become
        tracked by a merge."""
        env = self.git_at(index).pinned()
        self._listing = env.listing or ()
        # The run's own index (not a merge's, not a worktree's): kept between checkpoints.
        reuse = (index == self.root / INDEX and force_metadata and not leave_out
                 and not self._transient)
        last = self._kept if reuse else None
        try:
            kept = checkpointindex.seed(self.root, self.repo, index,
                                        last[0] if last is not None else None)
        except OSError as exc:  # UnsafePathError included
            raise CheckpointError(f"{INDEX}: {exc}") from None
        # The index still holds the last checkpoint's tree: aidd writes the next one itself.
        trees = self._trees_of(env, last[1]) if kept and last is not None else None
        added = self.git(env, "add", "-A", "-v", "--", ".", *_EXCLUDES,
                         *exclusions(leave_out)).splitlines()
        # The metadata needs its own forced add only where the user's .gitignore hides it.
        metadata = [m for m in self._hidden_metadata(env)
                    if force_metadata and (self.root / m).exists()]
        if metadata:
            added += self.git(env, "add", "-A", "-f", "-v", "--", *metadata).splitlines()
        names = [m.group(1) for m in map(_ADDED.fullmatch, added) if m is not None]
        self._added = names if kept and len(names) == len(added) else None
        # Nothing staged in the index the last checkpoint left: its tree, no write-tree.
        tree = last[1] if kept and last is not None and not added else (
            (trees is not None and self._added is not None and trees.write(names))
            or self.git(env, "write-tree"))
        self._kept = (checkpointindex.state(self.repo, index), tree) if reuse else None
        return tree

    def prune(self, keep_runs: int) -> list[str]:
        """Delete the refs of every run but the newest `keep_runs` (run ids begin with their
        UTC start, so they sort in time); returns the runs pruned. The commits go with git's
        own garbage collection."""
        if not self.exists():
            return []
        env = self.git_at(self.root / INDEX)
        refs = self.git(env, "for-each-ref", "--format=%(refname)", REF_ROOT).splitlines()
        # Only aidd's own run ids count: planted ones are neither kept in place of them nor pruned.
        ours = [(run_of(ref), ref) for ref in refs if is_run_id(run_of(ref))]
        runs = sorted({run for run, _ in ours})
        old = set(runs[:max(0, len(runs) - keep_runs)])
        doomed = [ref for run, ref in ours if run in old]
        if doomed:
            self.git(env, "update-ref", "--stdin",
                     stdin="".join(f"delete {ref}\n" for ref in doomed).encode())
        return sorted(old)

    def listing(self) -> list[Listed]:
        """Every checkpoint of aidd's runs in the project, oldest first; none where no
        repository holds any (listing never creates one)."""
        if not self.exists():
            return []
        env = self.git_at(self.root / INDEX)
        out = self.git(env, "for-each-ref", "--sort=creatordate", "--format=%(refname)%00"
                        "%(objectname)%00%(creatordate:iso-strict)%00%(contents:body)%00",
                        REF_ROOT)
        return parse_listing(out)

    def exists(self) -> bool:
        """A repository holds this project's checkpoints (asking never makes one), and its
        layout is safe to read."""
        try:
            self._open(create=False)
        except CheckpointError:
            return False
        return True

    # -- the repository ------------------------------------------------------------------
    def _open(self, create: bool = True) -> Repo:
        """The project's own repository (kept: found once a run), else the private one (made
        when `create`, and kept by `repo` alone, which makes it safe)."""
        if self._repo is not None and not self._repo.private:
            return self._repo  # `exists` then `repo` at the first checkpoint: one rev-parse
        if which(self._env) is None:
            raise CheckpointError("git not found on PATH")
        found = self._try("rev-parse", "--absolute-git-dir", "--show-toplevel")
        lines = found.splitlines() if found is not None else []
        if len(lines) == 2 and not self._ignored_by(Path(lines[1])):
            problem = own_problem(self.root, Path(lines[1]), Path(lines[0]))
            if problem is not None:
                raise RefusedError(f"checkpoints off: {problem}")
            self._repo = Repo(Path(lines[0]), Path(lines[1]), private=False)
            return self._repo
        private = self.root / PRIVATE_REPO
        if not create and (not private.is_dir() or layout_problem(private) is not None):
            raise CheckpointError("this project has no checkpoints")
        if create:  # where no planted link leads elsewhere (fsio), with aidd's own config
            try:
                checkpointindex.make_private(self.root, private, lambda: self.git(
                    Git(self.root, self._env), "init", "-q", "--bare", str(private)))
            except OSError as exc:  # UnsafePathError included
                raise CheckpointError(f"{PRIVATE_REPO}: {exc}") from None
        return Repo(private, self.root, private=True)

    def _hidden_metadata(self, env: Git) -> tuple[str, ...]:
        """The metadata the ignore rules hide (the index aside): git is asked again only when
        a file holding such rules changed, so most checkpoints save a git run."""
        repo = self.repo
        key = rules_key(self.root, repo.work_tree, repo.git_dir, env.listing or ())
        if self._hidden is None or self._hidden[0] != key:
            out = self._try("check-ignore", "--no-index", "--", *METADATA, git=env) or ""
            self._hidden = (key, tuple(out.splitlines()))
        return self._hidden[1]

    def _ignored_by(self, top: Path) -> bool:
        """A project inside a repository that ignores it (a scratch folder under an ignored
        path) gets the private repository: the enclosing one would record none of it."""
        if top.resolve() == self.root.resolve():
            return False
        return self._try("check-ignore", "-q", "--", ".") is not None

    def _head(self, env: Git) -> str | None:
        repo = self.repo
        return (head_commit(repo.work_tree, repo.git_dir)
                or self._try("rev-parse", "-q", "--verify", "HEAD^{commit}", git=env) or None)

    def changed_paths(self, start: Checkpoint, end: Checkpoint) -> list[str]:
        """The paths that differ between two checkpoints of the run, sorted."""
        if start.tree == end.tree:
            return []
        if self._diffed is not None and self._diffed[1:2] == (end.tree,) and (
                self._diffed[0] in (start.commit, start.tree)):
            return self._diffed[2]  # `record` just compared these two
        return self._paths(self.git_at(self.root / INDEX), start.tree, end.tree)

    def moved(self, start: Checkpoint, end: Checkpoint) -> bool:
        """HEAD moved or a file outside `.automaker/` changed: the stuck fingerprint's answer."""
        if start.head != end.head:
            return True
        inside = self.root.resolve().relative_to(self.repo.work_tree.resolve()).as_posix()
        prefix = "" if inside == "." else inside + "/"
        return any(path.startswith(prefix) and not path.startswith(f"{prefix}.automaker/")
                   for path in self.changed_paths(start, end))

    def _paths(self, env: Git, parent: str | None, tree: str) -> list[str]:
        # NUL-separated, unquoted: the names as `add -v` gives them (`tree`), and any name.
        args = (("ls-tree", "-r", "-z", "--name-only", tree) if parent is None else
                ("diff-tree", "-r", "-z", "--name-only", "--no-renames", parent, tree))
        return sorted(name.decode("utf-8", "surrogateescape")
                      for name in self._done(env, args, None, check=True).out.split(b"\0") if name)

    # -- running git ---------------------------------------------------------------------
    def git_bytes(self, git: Git, stdin: bytes, *args: str) -> bytes:
        """A read whose output is bytes (blobs, `-z` listings), fed `stdin`: the report's."""
        return self._done(git, args, stdin, check=True).out

    def git(self, git: Git, *args: str, stdin: bytes | None = None) -> str:
        return self._done(git, args, stdin, check=True).text

    def _try(self, *args: str, git: Git | None = None) -> str | None:
        """stdout of a git run whose failure is an answer (None), not an error."""
        done = self._done(git or Git(self.root, self._env), args, None)
        return done.text if done.ok else None

    @staticmethod
    def _done(git: Git, args: tuple[str, ...], stdin: bytes | None, check: bool = False) -> Done:
        """A git run; with `check`, one that failed is an error."""
        try:
            done = git.run(*args, stdin=stdin)
        except GitError as exc:
            raise CheckpointError(str(exc)) from None
        if check and not done.ok:
            raise CheckpointError(f"git {args[0]} failed: {done.why}")
        return done


