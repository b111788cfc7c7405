"""HEAD read from the repository's files (issue 33: one git run fewer per checkpoint), always
agreeing with git, and None (git asked) whenever the files are not plain."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aidd.project.gitlayout import head_commit
from tests.gitrepo import git, spy_reads


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


def test_the_git_directory_s_small_files_are_read_again_only_when_their_stat_changed(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each git run checks the config and its includes first, and each checkpoint reads HEAD
    (issue 33): a file is read once while its stat stays, again once it changed; a FIFO put
    in place of a known include is still refused."""
    from aidd.project import gitlayout

    reads = spy_reads(monkeypatch, gitlayout)
    where = {"GIT_DIR": str(repo / ".git")}
    with (repo / ".git" / "config").open("a") as config:
        config.write("[include]\n\tpath = extra\n")
    (repo / ".git" / "extra").write_text("[core]\n\tquotePath = false\n")
    first = gitlayout.config_files(repo, where, "")
    assert gitlayout.config_files(repo, where, "") == first
    assert reads.count("config") == 1
    assert reads.count("extra") == 1
    (repo / ".git" / "extra").unlink()
    os.mkfifo(repo / ".git" / "extra")
    assert "not a regular file" in (gitlayout.config_files(repo, where, "").problem or "")
    assert reads.count("config") == 1
    (repo / ".git" / "extra").unlink()  # git itself would wait on the FIFO
    assert [head_commit(repo, repo / ".git") for _ in range(3)] == [_head(repo)] * 3
    assert reads.count("HEAD") == 1
    (repo / "a.txt").write_text("b\n")
    git(repo, "commit", "-qam", "two")  # the branch's ref file replaced
    assert head_commit(repo, repo / ".git") == _head(repo)
    assert reads.count("main") == 2
