"""run/mergequeue with real git: a clean merge moves the project's branch and checkout, a
conflict never touches them and a red merged gate is undone, both sending the feature back with
its reason, the branch kept; the feature's file travels back whether `.automaker/` is tracked or
not; a merge driver the repository names never runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from aidd.project.merging import MergeEnd
from aidd.project.worktrees import Worktree, Worktrees, base_dir
from aidd.run.mergequeue import Finished, MergeQueue
from tests.gitrepo import git

FEATURE = ".automaker/features/{}/feature.json"


def project(tmp_path: Path, track_automaker: bool = False) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("" if track_automaker else ".automaker/\n")
    (root / "app.py").write_text("one\ntwo\nthree\n")
    for fid in ("f1", "f2"):
        path = root / FEATURE.format(fid)
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"id": fid, "status": "backlog"}))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    return root


def trees_of(root: Path, tmp_path: Path) -> Worktrees:
    environ = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}
    return Worktrees(root, environ, base_dir(root, environ, tmp_path / "data"))


def work(trees: Worktrees, fid: str, files: dict[str, str]) -> Finished:
    """An agent's attempt at `fid` in its worktree: files written, its feature verified, and
    nothing committed (aidd's queue commits it)."""
    tree = trees.create(fid)
    trees.seed(tree)
    for name, text in files.items():
        (tree.path / name).write_text(text)
    feature = tree.path / FEATURE.format(fid)
    feature.write_text(json.dumps({"id": fid, "status": "verified"}))
    return Finished(tree, FEATURE.format(fid))


def finish(queue: MergeQueue, finished: Finished) -> None:
    queue.commit(finished.tree, 1)
    queue.enqueue(finished)


@pytest.mark.parametrize("tracked", [False, True])
def test_clean_merges_move_the_branch_and_the_checkout(tmp_path: Path, tracked: bool) -> None:
    root = project(tmp_path, tracked)
    trees = trees_of(root, tmp_path)
    gated: list[Path] = []
    queue = MergeQueue(trees, lambda where: gated.append(where) or "")
    first = work(trees, "f1", {"one.py": "1\n"})
    second = work(trees, "f2", {"two.py": "2\n"})
    finish(queue, first)
    finish(queue, second)
    reports = queue.drain()
    assert [(r.feature_id, r.end) for r in reports] == [("f1", MergeEnd.MERGED),
                                                         ("f2", MergeEnd.MERGED)]
    assert git(root, "rev-parse", "HEAD").strip() == reports[1].commit
    assert git(root, "log", "--first-parent", "--format=%s").splitlines() == [
        "aidd: merge aidd/f2", "aidd: merge aidd/f1", "first"]
    assert (root / "one.py").read_text() == "1\n"
    assert (root / "two.py").read_text() == "2\n"
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
    for fid in ("f1", "f2"):
        assert json.loads((root / FEATURE.format(fid)).read_text())["status"] == "verified"
    assert gated == [root, root]  # in the checkout, where the baseline was measured
    assert queue.reasons == {}


def test_a_conflict_sends_the_feature_back_and_keeps_its_branch(tmp_path: Path) -> None:
    root = project(tmp_path)
    trees = trees_of(root, tmp_path)
    queue = MergeQueue(trees, lambda where: "")
    first = work(trees, "f1", {"app.py": "one\nTWO by f1\nthree\n"})
    second = work(trees, "f2", {"app.py": "one\nTWO by f2\nthree\n"})
    finish(queue, first)
    finish(queue, second)
    reports = queue.drain()
    assert [r.end for r in reports] == [MergeEnd.MERGED, MergeEnd.CONFLICT]
    assert "app.py" in reports[1].why
    assert queue.reasons["f2"].end is MergeEnd.CONFLICT
    assert (root / "app.py").read_text() == "one\nTWO by f1\nthree\n"
    assert json.loads((root / FEATURE.format("f2")).read_text())["status"] == "backlog"
    assert git(root, "show", "aidd/f2:app.py") == "one\nTWO by f2\nthree\n"  # nothing lost
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
    # The next attempt solves it on top of the project's new commit: then it merges.
    git(second.tree.path, "merge", "-q", "-X", "theirs", "main", "-m", "take main")
    finish(queue, second)
    assert [r.end for r in queue.drain()] == [MergeEnd.MERGED]
    assert "f2" not in queue.reasons


def test_a_red_merged_gate_is_undone(tmp_path: Path) -> None:
    root = project(tmp_path)
    trees = trees_of(root, tmp_path)
    before = git(root, "rev-parse", "HEAD")
    seen: list[bool] = []
    queue = MergeQueue(trees, lambda where: seen.append((where / "broken.py").exists()) or
                       ("red" if seen[-1] else ""))
    finish(queue, work(trees, "f1", {"broken.py": "raise SystemExit(1)\n"}))
    [report] = queue.drain()
    assert seen == [True]  # the gate judged the merged result
    assert report.end is MergeEnd.MERGE_RED
    assert queue.reasons["f1"].end is MergeEnd.MERGE_RED
    assert git(root, "rev-parse", "HEAD") == before
    assert not (root / "broken.py").exists()
    assert git(root, "show", "aidd/f1:broken.py") == "raise SystemExit(1)\n"
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
    # The next merge starts from the project's commit, without the red one.
    finish(queue, work(trees, "f2", {"fine.py": "ok\n"}))
    assert [r.end for r in queue.drain()] == [MergeEnd.MERGED]
    assert not (root / "broken.py").exists()


def test_a_local_change_in_the_checkout_is_never_overwritten(tmp_path: Path) -> None:
    root = project(tmp_path)
    trees = trees_of(root, tmp_path)
    queue = MergeQueue(trees, lambda where: "")
    finish(queue, work(trees, "f1", {"app.py": "agent's\n", "new.py": "n\n"}))
    (root / "app.py").write_text("the user's own edit\n")
    [report] = queue.drain()
    assert report.end is MergeEnd.CONFLICT
    assert (root / "app.py").read_text() == "the user's own edit\n"
    assert not (root / "new.py").exists()
    assert git(root, "log", "--format=%s").splitlines() == ["first"]


def test_a_branch_with_nothing_new_is_not_merged(tmp_path: Path) -> None:
    root = project(tmp_path)
    trees = trees_of(root, tmp_path)
    queue = MergeQueue(trees, lambda where: "")
    tree: Worktree = trees.create("f1")
    queue.enqueue(Finished(tree, FEATURE.format("f1")))
    assert [r.end for r in queue.drain()] == [MergeEnd.NOTHING]
    assert "f1" not in queue.reasons


def test_a_merge_driver_the_repository_names_never_runs(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / ".gitattributes").write_text("app.py merge=evil\n")
    git(root, "add", ".gitattributes")
    git(root, "commit", "-qm", "attributes")
    git(root, "config", "merge.evil.driver", f"touch {tmp_path / 'pwned'}; exit 0")
    trees = trees_of(root, tmp_path)
    queue = MergeQueue(trees, lambda where: "")
    finish(queue, work(trees, "f1", {"app.py": "one\nf1\nthree\n"}))
    finish(queue, work(trees, "f2", {"app.py": "one\nf2\nthree\n"}))
    queue.drain()
    assert not (tmp_path / "pwned").exists()


def test_a_commit_the_user_made_meanwhile_is_kept_and_the_merge_made_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's branch moved between the merge and its move into the project: the
    compare-and-swap refuses, the merge is made again on the new commit, nothing is lost."""
    root = project(tmp_path)
    trees = trees_of(root, tmp_path)
    queue = MergeQueue(trees, lambda where: "")
    merge = queue.merger.merge
    made_on: list[str] = []

    def user_commits_once(branch: str) -> object:
        made = merge(branch)
        made_on.append(getattr(made, "old", ""))
        if len(made_on) == 1:
            (root / "user.txt").write_text("mine\n")
            git(root, "add", "user.txt")
            git(root, "commit", "-qm", "the user's commit")
        return made

    monkeypatch.setattr(queue.merger, "merge", user_commits_once)
    finish(queue, work(trees, "f1", {"one.py": "1\n"}))
    [report] = queue.drain()
    assert report.end is MergeEnd.MERGED
    assert len(made_on) == 2
    assert made_on[0] != made_on[1]  # made again, on the user's commit
    assert git(root, "log", "--first-parent", "--format=%s").splitlines() == [
        "aidd: merge aidd/f1", "the user's commit", "first"]
    assert (root / "user.txt").read_text() == "mine\n"
    assert (root / "one.py").read_text() == "1\n"


def test_an_oversized_feature_file_in_the_worktree_is_not_carried_back(tmp_path: Path) -> None:
    """The agent left a feature.json past the reader's cap: the merge goes on, the board keeps
    its own file (a raised FileTooLargeError ended the run before)."""
    root = project(tmp_path)
    trees = trees_of(root, tmp_path)
    queue = MergeQueue(trees, lambda _where: "")
    finished = work(trees, "f1", {"one.py": "1\n"})
    with (finished.tree.path / FEATURE.format("f1")).open("r+b") as planted:
        planted.truncate(17 * 1024 * 1024)
    finish(queue, finished)
    assert [r.end for r in queue.drain()] == [MergeEnd.MERGED]
    assert json.loads((root / FEATURE.format("f1")).read_text())["status"] == "backlog"
