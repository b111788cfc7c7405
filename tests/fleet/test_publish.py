"""A worker's checkout of a git project, without Temporal: `prepare` clones it onto the
project's branch (keeping its own unpushed work, dropping a stale attempt's), and `Publisher`
commits and pushes without force (nothing to do, pushed, rejected: stale, failed: not stale)."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("temporalio", reason="the fleet extra is not installed")

from aidd.fleet.checkout import checkout_dir, prepare
from aidd.fleet.publish import Publisher, Push
from aidd.fleet.records import ProjectJob

BRANCH = "aidd/night"
USER = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@localhost"}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **USER}, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    bare, seed = tmp_path / "remote.git", tmp_path / "seed"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    _git(tmp_path, "init", "-q", "-b", "main", str(seed))
    (seed / "README.md").write_text("hi\n")
    _git(seed, "add", "README.md")
    _git(seed, "commit", "-qm", "start")
    _git(seed, "push", "-q", str(bare), "main")
    return bare


def _job(remote: Path) -> ProjectJob:
    return ProjectJob(fleet="f", name="p", path="", git=str(remote), branch=BRANCH,
                      cli="opencode", args=[], pool="")


def _head(remote: Path) -> str:
    return _git(remote, "rev-parse", BRANCH)


def test_a_change_is_committed_and_pushed_without_the_runtime_files(
        tmp_path: Path, remote: Path) -> None:
    root = asyncio.run(prepare(_job(remote), tmp_path / "data"))
    assert root == checkout_dir(_job(remote), tmp_path / "data")
    publisher = Publisher(root, BRANCH)
    (root / ".automaker").mkdir()
    (root / ".automaker" / "events.jsonl").write_text("{}\n")
    assert asyncio.run(publisher.publish("nothing yet")) is Push.PUSHED  # the new branch
    (root / "work.txt").write_text("done\n")
    assert asyncio.run(publisher.publish("aidd fleet: p, iteration 1")) is Push.PUSHED
    assert publisher.head == _head(remote)
    assert _git(remote, "log", "-1", "--format=%an|%s", BRANCH) == \
        "aidd fleet|aidd fleet: p, iteration 1"
    assert _git(remote, "ls-tree", "-r", "--name-only", BRANCH).split() == \
        ["README.md", "work.txt"]
    assert asyncio.run(publisher.publish("again")) is Push.NOTHING


def test_a_push_onto_a_branch_that_moved_on_is_rejected_and_leaves_it(
        tmp_path: Path, remote: Path) -> None:
    mine = asyncio.run(prepare(_job(remote), tmp_path / "mine"))
    publisher = Publisher(mine, BRANCH)
    asyncio.run(publisher.publish("start"))
    theirs = asyncio.run(prepare(_job(remote), tmp_path / "theirs"))
    (theirs / "newer.txt").write_text("newer\n")
    assert asyncio.run(Publisher(theirs, BRANCH).publish("newer")) is Push.PUSHED
    newer = _head(remote)
    (mine / "older.txt").write_text("older\n")
    assert asyncio.run(publisher.publish("older")) is Push.REJECTED
    assert publisher.stale
    assert "[rejected]" in publisher.error
    assert _head(remote) == newer
    assert asyncio.run(publisher.publish("once more")) is Push.REJECTED  # stale for good
    # The stale checkout, prepared again, takes the newer work and drops its own.
    asyncio.run(prepare(_job(remote), tmp_path / "mine"))
    assert (mine / "newer.txt").exists()
    assert not (mine / "older.txt").exists()


def test_an_unreachable_remote_fails_the_push_but_not_the_attempt(
        tmp_path: Path, remote: Path) -> None:
    root = asyncio.run(prepare(_job(remote), tmp_path / "data"))
    remote.rename(tmp_path / "gone.git")
    (root / "work.txt").write_text("done\n")
    publisher = Publisher(root, BRANCH)
    assert asyncio.run(publisher.publish("iteration 1")) is Push.FAILED
    assert not publisher.stale
    (tmp_path / "gone.git").rename(remote)
    assert asyncio.run(publisher.publish("iteration 2")) is Push.PUSHED  # the commit waited
    assert _git(remote, "log", "-1", "--format=%s", BRANCH) == "iteration 1"


def test_prepare_keeps_the_checkouts_own_unpushed_work(tmp_path: Path, remote: Path) -> None:
    root = asyncio.run(prepare(_job(remote), tmp_path / "data"))
    (root / "draft.txt").write_text("not pushed yet\n")
    asyncio.run(prepare(_job(remote), tmp_path / "data"))  # a retry on the same worker
    assert (root / "draft.txt").read_text() == "not pushed yet\n"
    assert _git(root, "symbolic-ref", "--short", "HEAD") == BRANCH


def test_a_planted_link_for_the_exclude_file_is_replaced_not_written_through(
        tmp_path: Path, remote: Path) -> None:
    """The agent works in the checkout: its `.git/info/exclude` may be a link out of it."""
    root = asyncio.run(prepare(_job(remote), tmp_path / "data"))
    outside = tmp_path / "outside.txt"
    outside.write_text("the user's file\n")
    exclude = root / ".git" / "info" / "exclude"
    exclude.unlink()
    exclude.symlink_to(outside)
    asyncio.run(prepare(_job(remote), tmp_path / "data"))  # a retry on the same worker
    assert outside.read_text() == "the user's file\n"
    assert not exclude.is_symlink()
    assert "/.automaker/events.jsonl" in exclude.read_text()
