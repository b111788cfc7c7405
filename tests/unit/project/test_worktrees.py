"""project/worktrees with real git: a worktree per feature outside the project, its work
committed on `aidd/<id>`, a killed run's worktrees removed with unmerged branches kept, the
user's checkout untouched, and ids that cannot be branches or folders refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aidd.project.worktrees import (
    QUEUE,
    WorktreeError,
    Worktrees,
    base_dir,
    branch_of,
    valid_id,
)
from tests.gitrepo import git
from tests.unit.project.test_checkpoints import user_state


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(".automaker/\n")
    (root / "app.py").write_text("print('v1')\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    (root / "app.py").write_text("print('user edit, not committed')\n")
    git(root, "stash", "-q")
    (root / "notes.txt").write_text("the user's own, untracked\n")
    return root


def make(repo: Path, tmp_path: Path) -> Worktrees:
    environ = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}
    return Worktrees(repo, environ, base_dir(repo, environ, tmp_path / "data"))


def test_a_feature_works_on_its_own_branch_outside_the_project(repo: Path,
                                                                  tmp_path: Path) -> None:
    before = user_state(repo)
    trees = make(repo, tmp_path)
    tree = trees.create("feature-1-a")
    assert not tree.path.is_relative_to(repo)
    assert tree.path.parent == trees.base
    assert (tree.path / "app.py").read_text() == "print('v1')\n"
    assert git(tree.path, "symbolic-ref", "HEAD").strip() == "refs/heads/aidd/feature-1-a"
    (tree.path / "app.py").write_text("print('v2')\n")
    (tree.path / "new.py").write_text("x = 1\n")
    made = trees.commit(tree, "aidd: feature-1-a")
    assert made == git(repo, "rev-parse", "aidd/feature-1-a").strip()
    assert git(repo, "show", "aidd/feature-1-a:new.py") == "x = 1\n"
    assert git(tree.path, "status", "--porcelain") == ""  # index at the commit, files kept
    assert trees.commit(tree, "again") is None  # nothing changed since
    assert [t.feature_id for t in trees.listed()] == ["feature-1-a"]
    trees.remove(tree)
    assert not tree.path.exists()
    assert user_state(repo)[:4] == before[:4]  # HEAD, branch, index, stash
    assert (repo / "notes.txt").is_file()


def test_runtime_files_and_ignored_metadata_stay_off_the_branch(repo: Path,
                                                                 tmp_path: Path) -> None:
    trees = make(repo, tmp_path)
    tree = trees.create("f1")
    features = tree.path / ".automaker" / "features" / "f1"
    features.mkdir(parents=True)
    (features / "feature.json").write_text("{}")
    (tree.path / ".automaker" / "events.jsonl").write_text("{}\n")
    (tree.path / "code.py").write_text("y = 2\n")
    trees.commit(tree, "aidd: f1")
    listed = git(repo, "ls-tree", "-r", "--name-only", "aidd/f1").split()
    assert listed == [".gitignore", "app.py", "code.py"]


def test_the_agents_own_commits_stay_and_its_branch_switch_is_undone(repo: Path,
                                                                     tmp_path: Path) -> None:
    trees = make(repo, tmp_path)
    tree = trees.create("f1")
    (tree.path / "a.py").write_text("a\n")
    git(tree.path, "add", "a.py")
    git(tree.path, "commit", "-qm", "agent's commit")
    git(tree.path, "checkout", "-q", "-b", "elsewhere")
    (tree.path / "b.py").write_text("b\n")
    made = trees.commit(tree, "aidd: f1")
    assert git(repo, "log", "--format=%s", "aidd/f1").splitlines() == [
        "aidd: f1", "agent's commit", "first"]
    assert made is not None
    assert git(tree.path, "symbolic-ref", "HEAD").strip() == "refs/heads/aidd/f1"


def test_a_killed_runs_worktrees_are_removed_and_unmerged_work_kept(repo: Path,
                                                                    tmp_path: Path) -> None:
    trees = make(repo, tmp_path)
    unmerged, merged = trees.create("f1"), trees.create("f2")
    (unmerged.path / "half.py").write_text("half done\n")  # never committed by the agent
    queue = trees.base / QUEUE
    git(repo, "worktree", "add", "-q", "--detach", str(queue))
    again = make(repo, tmp_path)  # the next start
    left = again.clean_up()
    assert sorted(left.removed) == sorted(str(p) for p in (unmerged.path, merged.path, queue))
    assert left.kept == ("aidd/f1",)
    assert left.deleted == ("aidd/f2",)  # nothing on it the project lacks
    assert git(repo, "show", "aidd/f1:half.py") == "half done\n"
    assert not unmerged.path.exists()
    assert not queue.exists()
    assert again.registered() == []
    resumed = again.create("f1")  # the next attempt resumes on the kept branch
    assert (resumed.path / "half.py").read_text() == "half done\n"


def test_a_vanished_worktree_folder_is_pruned(repo: Path, tmp_path: Path) -> None:
    trees = make(repo, tmp_path)
    tree = trees.create("f1")
    git(repo, "worktree", "remove", "--force", str(tree.path))
    git(repo, "worktree", "add", "-q", str(tree.path), "aidd/f1")
    for path in sorted(tree.path.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    tree.path.rmdir()
    assert make(repo, tmp_path).clean_up().deleted == ("aidd/f1",)
    listed = git(repo, "worktree", "list")  # "path commit [branch]": a commit may hold "f1"
    assert str(tree.path) not in listed
    assert "[aidd/f1]" not in listed


def test_the_branch_the_user_is_on_is_never_deleted(repo: Path, tmp_path: Path) -> None:
    trees = make(repo, tmp_path)
    trees.remove(trees.create("f1"))
    git(repo, "checkout", "-q", "aidd/f1")
    assert make(repo, tmp_path).clean_up().kept == ("aidd/f1",)
    assert git(repo, "symbolic-ref", "HEAD").strip() == "refs/heads/aidd/f1"
    git(repo, "rev-parse", "--verify", "HEAD")


@pytest.mark.parametrize("fid", ["../x", "a/b", "-rf", ".hidden", "a..b", "x.lock", "a b",
                                 "", "x" * 101, "a.", "a@{1}", "é"])
def test_an_id_that_cannot_be_a_branch_and_a_folder_is_refused(fid: str) -> None:
    assert not valid_id(fid)
    with pytest.raises(WorktreeError):
        branch_of(fid)


def test_automakers_ids_are_valid() -> None:
    assert valid_id("feature-1700000000000-ab12cd")
    assert branch_of("login_v2.1") == "aidd/login_v2.1"


def test_worktrees_never_live_inside_the_project(repo: Path) -> None:
    with pytest.raises(WorktreeError, match="inside the project"):
        base_dir(repo, {}, repo / "trees")
    environ = {"XDG_DATA_HOME": str(repo / "data")}  # a data directory inside the project
    with pytest.raises(WorktreeError, match="inside the project"):
        base_dir(repo, environ)
    assert base_dir(repo, {"HOME": "/home/u"}).parent == Path(
        "/home/u/.local/share/aidd/worktrees")


def test_a_project_below_its_repositorys_top_is_refused(repo: Path, tmp_path: Path) -> None:
    inner = repo / "sub"
    inner.mkdir()
    with pytest.raises(WorktreeError, match="top of its own"):
        Worktrees(inner, {"PATH": os.environ["PATH"]}, tmp_path / "trees")


def test_a_rewritten_dot_git_file_does_not_lead_aidds_git_elsewhere(repo: Path,
                                                                    tmp_path: Path) -> None:
    """The agent may point its worktree's `.git` at another repository: aidd's commit still
    lands on the project's branch, the other repository gets nothing."""
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    trees = make(repo, tmp_path)
    tree = trees.create("f1")
    (tree.path / ".git").write_text(f"gitdir: {other / '.git'}\n")
    (tree.path / "work.py").write_text("w\n")
    trees.commit(tree, "aidd: f1")
    assert git(repo, "show", "aidd/f1:work.py") == "w\n"
    assert git(other, "for-each-ref") == ""


def test_the_repositorys_filters_and_hooks_never_run(repo: Path, tmp_path: Path) -> None:
    """A worktree's checkout, aidd's commit and the clean-up run no program the project's
    config names (a smudge or clean filter, a post-checkout hook)."""
    pwned = tmp_path / "pwned"
    (repo / ".gitattributes").write_text("* filter=evil\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "attributes")
    git(repo, "config", "filter.evil.smudge", f"touch {pwned}; cat")
    git(repo, "config", "filter.evil.clean", f"touch {pwned}; cat")
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {pwned}\n")
    hook.chmod(0o755)
    trees = make(repo, tmp_path)
    tree = trees.create("f1")
    (tree.path / "more.py").write_text("m\n")
    trees.commit(tree, "aidd: f1")
    trees.clean_up()
    assert not pwned.exists()


def test_the_board_is_copied_in_and_no_link_leads_out(repo: Path, tmp_path: Path) -> None:
    """An ignored `.automaker/` reaches the worktree by copy; a feature file planted as a link
    to a file outside the project is not read into it."""
    secret = tmp_path / "secret.txt"
    secret.write_text("the user's secret\n")
    features = repo / ".automaker" / "features"
    (features / "f1").mkdir(parents=True)
    (features / "f1" / "feature.json").write_text('{"id": "f1"}')
    (features / "leak").mkdir()
    (features / "leak" / "feature.json").symlink_to(secret)
    (repo / ".automaker" / "app_spec.txt").write_text("the spec\n")
    trees = make(repo, tmp_path)
    tree = trees.create("f1")
    assert trees.seed(tree) == [".automaker/app_spec.txt",
                                ".automaker/features/f1/feature.json"]
    assert (tree.path / ".automaker/features/f1/feature.json").read_text() == '{"id": "f1"}'
    assert not (tree.path / ".automaker/features/leak").exists()
    assert not trees.tracks_metadata()
