"""HEAD read from the repository's files (issue 33: one git run fewer per checkpoint), always
agreeing with git, and None (git asked) whenever the files are not plain."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aidd.project.gitlayout import head_commit
from tests.gitrepo import git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "a.txt").write_text("a\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "one")
    return tmp_path


def _head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def test_a_branch_a_packed_branch_and_a_detached_head_agree_with_git(repo: Path) -> None:
    assert head_commit(repo, repo / ".git") == _head(repo)
    git(repo, "pack-refs", "--all")  # the loose ref is gone: packed-refs holds it
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert head_commit(repo, repo / ".git") == _head(repo)
    git(repo, "checkout", "-q", "--detach")
    assert head_commit(repo, repo / ".git") == _head(repo)


def test_anything_not_plain_is_left_to_git(repo: Path, tmp_path: Path) -> None:
    dot_git = repo / ".git"
    git(repo, "checkout", "-q", "-b", "feature/x")
    assert head_commit(repo, dot_git) == _head(repo)
    (dot_git / "HEAD").write_text("ref: refs/heads/../../config\n")  # planted
    assert head_commit(repo, dot_git) is None
    (dot_git / "HEAD").write_text("ref: refs/heads/unborn\n")
    assert head_commit(repo, dot_git) is None
    (dot_git / "HEAD").unlink()
    os.mkfifo(dot_git / "HEAD")  # never waited on
    assert head_commit(repo, dot_git) is None
    (dot_git / "HEAD").unlink()
    (dot_git / "HEAD").write_text("ref: refs/heads/main\n")
    (dot_git / "refs" / "heads" / "main").write_text("not an id\n")
    assert head_commit(repo, dot_git) is None
