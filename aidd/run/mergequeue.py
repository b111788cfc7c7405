"""`--parallel N`'s merge queue (docs/parallel.md): when a slot's attempt ends its work is
committed on its branch; a finished feature's branch then waits its turn, is merged into the
project's branch one at a time, gated on the merged result, and kept only when green. A
conflict or a red merged gate sends the feature back to open (the project's feature file never
got the agent's verdict) with the reason kept for its next prompt; the branch stays."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aidd.fsio import make_dirs, write_atomic
from aidd.project import boardmarks
from aidd.project.featureguard import AGENT_KEYS
from aidd.project.featurescan import read_feature
from aidd.project.git import GitError
from aidd.project.merging import Candidate, MergeEnd, Merger, Refused
from aidd.project.worktrees import Worktree, WorktreeError, Worktrees

# The gate on the merged result, run in the project's checkout: "" when green (against the
# run's baseline), else why not.
MergedGate = Callable[[Path], str]


@dataclass(frozen=True)
class Finished:
    """A slot's finished feature, waiting for the queue."""

    tree: Worktree
    feature_file: str  # its feature.json, relative to the project (and to the worktree)
    mark: boardmarks.Mark | None = None  # the board's mark while it was worked


@dataclass(frozen=True)
class MergeReport:
    feature_id: str
    end: MergeEnd
    why: str = ""
    commit: str = ""  # the project's new commit when merged

    @property
    def sent_back(self) -> bool:
        """The feature is open again: its next attempt is told why (`reason`)."""
        return self.end in (MergeEnd.CONFLICT, MergeEnd.MERGE_RED)


class MergeQueue:
    """One merge at a time, in the order features finished; the only writer of the project's
    checkout while slots work."""

    def __init__(self, trees: Worktrees, gate: MergedGate) -> None:
        self.trees = trees
        self.merger = Merger(trees)
        self.gate = gate
        self.reasons: dict[str, MergeReport] = {}  # each feature's last refusal
        self._waiting: deque[Finished] = deque()
        self._lock = threading.Lock()  # slots end their attempts on their own threads
        self._turn = threading.Lock()  # one merge at a time, whoever drains

    def commit(self, tree: Worktree, number: int) -> str | None:
        """What the attempt left uncommitted, committed on the feature's branch."""
        return self.trees.commit(tree, f"aidd: {tree.feature_id}, attempt {number:03d}")

    def enqueue(self, finished: Finished) -> None:
        with self._lock:
            self._waiting.append(finished)

    def drain(self) -> list[MergeReport]:
        """Every waiting feature merged or sent back, in turn."""
        reports: list[MergeReport] = []
        with self._turn:
            while True:
                with self._lock:
                    if not self._waiting:
                        return reports
                    finished = self._waiting.popleft()
                reports.append(self._merge(finished))

    def _merge(self, finished: Finished) -> MergeReport:
        fid = finished.tree.feature_id
        try:
            report = self._attempt(finished)
            if isinstance(report, Refused) and report.moved_on:
                report = self._attempt(finished)  # once more, on the branch's new commit
        except (WorktreeError, GitError) as exc:
            report = Refused(MergeEnd.CONFLICT, f"git failed: {exc}")
        if isinstance(report, Refused):
            done = MergeReport(fid, report.end, report.why)
            if done.sent_back:
                self.reasons[fid] = done
            else:  # nothing new to merge: the work is the project's already, the verdict too
                self._carry_back(finished)
            return done
        self.reasons.pop(fid, None)
        self._carry_back(finished)
        return MergeReport(fid, MergeEnd.MERGED, commit=report.commit)

    def _attempt(self, finished: Finished) -> Candidate | Refused:
        """Merged, moved into the project, gated there (its real environment, as the
        baseline was), and moved back when red."""
        made = self.merger.merge(finished.tree.branch)
        if isinstance(made, Refused):
            return made
        refused = self.merger.advance(made)
        if refused is not None:
            return refused
        why = self.gate(self.trees.root)
        if not why:
            return made
        stuck = self.merger.retreat(made)
        return Refused(MergeEnd.MERGE_RED, why + (f"; {stuck}" if stuck else ""))

    def _carry_back(self, finished: Finished) -> None:
        """The feature's file as its agent left it, into the project (where `.automaker/` is
        not tracked, the merge did not bring it); read as feature files are read."""
        root, tree = self.trees.root, finished.tree.path
        data = _feature_bytes(tree / finished.feature_file, tree)
        if data is None:
            return
        target = root / finished.feature_file
        make_dirs(root, target.parent)
        if finished.mark is not None:  # a person's board edit meanwhile is kept
            data = boardmarks.carried(data, finished.mark, _feature_bytes(target, root),
                                      AGENT_KEYS)
        write_atomic(target, data, root=root)


def _feature_bytes(path: Path, root: Path) -> bytes | None:
    """A feature file read as feature files are; None where there is none to read, or one
    planted that cannot be (oversized, unreadable): the board keeps what it has."""
    try:
        return read_feature(str(path), str(root))
    except OSError:
        return None
