"""One merge of `--parallel N`'s queue, in git (docs/parallel.md): a feature's branch merged
with `--no-ff` in the queue's own worktree, on the commit the project is on, so a conflict
never touches the project's checkout; then the project's branch moved to it in one
compare-and-swap and its checkout with it, never over a local change, for the gate to judge
it there; moved back the same way when it is red. A refused merge leaves the feature's branch
as it was: nothing is lost."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum, unique
from pathlib import Path

from aidd.project.checkpoints import IDENTITY
from aidd.project.git import Git, GitError
from aidd.project.worktrees import Worktree, WorktreeError, Worktrees
from aidd.resources import package_file

# The board's logs every agent appends to (CHANGELOG.md, todo.md) merge with both sides' lines:
# else each second merge of a night conflicts on the changelog and goes back for nothing.
UNION_LOGS = package_file("project/queue.gitattributes")


@unique
class MergeEnd(Enum):
    MERGED = "merged"
    NOTHING = "nothing"  # the branch holds nothing the project's commit lacks
    CONFLICT = "conflict"  # git could not merge it, or the checkout has a local change there
    MERGE_RED = "merge_red"  # merged, but the gate on the merged result was red: undone


@dataclass(frozen=True)
class Candidate:
    """A merge made in the queue's worktree, not yet the project's."""

    old: str  # the project's commit it is made on
    commit: str  # the merge commit
    path: Path  # the queue's worktree, holding the merged result


@dataclass(frozen=True)
class Refused:
    end: MergeEnd
    why: str
    moved_on: bool = False  # the project's branch moved since the merge: made again, it may go


class Merger:
    def __init__(self, trees: Worktrees) -> None:
        self.trees = trees

    def merge(self, branch: str) -> Candidate | Refused:
        """`branch` merged into the project's current commit, in the queue's worktree."""
        old = self.trees.resolve("HEAD")
        if not old:
            return Refused(MergeEnd.CONFLICT, "the project has no commit to merge into")
        if self.trees.is_merged(branch, old):
            return Refused(MergeEnd.NOTHING, f"{branch} holds nothing new")
        queue = self.trees.queue(old)
        git = self._git(queue)
        self._reset(git, old)
        done = git.run("merge", "--no-ff", "--no-edit", "-m", f"aidd: merge {branch}",
                       f"refs/heads/{branch}")
        if not done.ok:
            conflicted = git.run("diff", "--name-only", "--diff-filter=U").text.split()
            self._reset(git, old)
            named = f" in {', '.join(conflicted[:5])}" if conflicted else f": {done.why}"
            return Refused(MergeEnd.CONFLICT, f"{branch} does not merge{named}")
        return Candidate(old, self.trees.resolve("HEAD", git), queue.path)

    def advance(self, made: Candidate) -> Refused | None:
        """The project's branch and checkout moved to the merge; None when done. git refuses
        (and nothing moves) where a local change or an untracked file would be overwritten;
        a branch that moved since the merge was made is not moved again."""
        git = self.trees.git()
        if self.trees.resolve("HEAD") != made.old:
            return Refused(MergeEnd.CONFLICT, "the project's branch moved on", moved_on=True)
        git.run("update-index", "-q", "--refresh")  # stat-only changes are no local change
        done = git.run("read-tree", "-m", "-u", made.old, made.commit)
        if not done.ok:
            return Refused(MergeEnd.CONFLICT, f"the project's checkout has a local change: "
                                              f"{done.why}")
        moved = git.run("update-ref", "-m", "aidd: merge", "HEAD", made.commit, made.old)
        if not moved.ok:  # moved meanwhile: the checkout back to where the branch was
            git.run("read-tree", "-m", "-u", made.commit, made.old)
            return Refused(MergeEnd.CONFLICT, f"the project's branch moved on: {moved.why}",
                           moved_on=True)
        return None

    def retreat(self, made: Candidate) -> str | None:
        """Undo an advanced merge the gate found red: the branch back on the old commit (a
        compare-and-swap) and the checkout with it. Why it could not be undone, or None."""
        git = self.trees.git()
        git.run("update-index", "-q", "--refresh")
        done = git.run("read-tree", "-m", "-u", made.commit, made.old)
        if not done.ok:  # the gate changed a file the merge brought: left as it is, said
            return f"the checkout keeps the merge: {done.why}"
        moved = git.run("update-ref", "-m", "aidd: merge undone", "HEAD", made.old,
                        made.commit)
        return None if moved.ok else f"the branch keeps the merge: {moved.why}"

    def _git(self, queue: Worktree) -> Git:
        return replace(self.trees.git_in(queue), environ={**self.trees.environ, **IDENTITY},
                       attributes=UNION_LOGS)

    @staticmethod
    def _reset(git: Git, commit: str) -> None:
        """The queue's worktree clean on `commit` (an unfinished merge aborted)."""
        try:
            git.run("merge", "--abort")
            done = git.run("reset", "--hard", "--quiet", commit)
        except GitError as exc:
            raise WorktreeError(str(exc)) from None
        if not done.ok:
            raise WorktreeError(f"the merge queue's worktree: {done.why}")
