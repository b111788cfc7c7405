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
from aidd.fleet.progress import fold
from aidd.fleet.publish import Publisher, Publishing, Push
from aidd.fleet.records import Progress, ProjectJob
from aidd.project.checkpoints import CheckpointStore
from tests.planted import hostile_attributes, hostile_git_config

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


def _index(root: Path) -> str:
    return _git(root, "ls-files", "--stage")


def test_an_iteration_is_published_exactly_as_its_end_checkpoint_recorded_it(
        tmp_path: Path, remote: Path) -> None:
    """The next agent may be writing already: the pushed tree is aidd's `NNN-end` checkpoint,
    and while aidd runs the checkout's HEAD, index and files are left alone."""
    root = asyncio.run(prepare(_job(remote), tmp_path / "data"))
    start = _git(root, "rev-parse", "HEAD")
    (root / "done.txt").write_text("iteration 1\n")
    end = CheckpointStore(root, "run1", os.environ).record("001-end")
    (root / "next.txt").write_text("iteration 2 began\n")  # after the checkpoint
    index = _index(root)
    publisher = Publisher(root, BRANCH)
    assert asyncio.run(publisher.publish("iteration 1", end.commit)) is Push.PUSHED
    assert _git(remote, "ls-tree", "-r", "--name-only", BRANCH).split() == \
        ["README.md", "done.txt"]
    assert _git(root, "rev-parse", "HEAD") == start  # untouched while aidd runs
    assert _index(root) == index
    assert (root / "next.txt").exists()
    # aidd ended: the last snapshot, then the checkout settles on it, clean.
    assert asyncio.run(publisher.publish("end of run")) is Push.PUSHED
    asyncio.run(publisher.settle())
    assert _git(root, "rev-parse", "HEAD") == publisher.head == _head(remote)
    assert _git(root, "status", "--porcelain") == ""
    assert _git(remote, "log", "--format=%s", BRANCH).splitlines()[:2] == \
        ["end of run", "iteration 1"]


def test_a_forged_checkpoint_id_is_ignored_for_the_work_tree(
        tmp_path: Path, remote: Path) -> None:
    """events.jsonl lies in the project: its `commit` may be anything the agent wrote."""
    root = asyncio.run(prepare(_job(remote), tmp_path / "data"))
    (root / "work.txt").write_text("done\n")
    publisher = Publisher(root, BRANCH)
    for forged in ("--output=/tmp/x", "HEAD~1", "0" * 39):
        assert asyncio.run(publisher.publish("iteration", forged)) in (Push.PUSHED,
                                                                       Push.NOTHING)
    assert _git(remote, "ls-tree", "-r", "--name-only", BRANCH).split() == \
        ["README.md", "work.txt"]


def test_the_agents_own_commits_stay_in_the_branchs_history(
        tmp_path: Path, remote: Path) -> None:
    root = asyncio.run(prepare(_job(remote), tmp_path / "data"))
    publisher = Publisher(root, BRANCH)
    (root / "a.txt").write_text("a\n")
    assert asyncio.run(publisher.publish("iteration 1")) is Push.PUSHED
    (root / "b.txt").write_text("b\n")
    _git(root, "add", "b.txt")
    _git(root, "commit", "-qm", "the agent's own commit")
    mine = _git(root, "rev-parse", "HEAD")
    assert asyncio.run(publisher.publish("iteration 2")) is Push.PUSHED
    parents = _git(remote, "log", "-1", "--format=%P", BRANCH).split()
    assert parents[1] == mine
    assert _git(remote, "ls-tree", "-r", "--name-only", BRANCH).split() == \
        ["README.md", "a.txt", "b.txt"]


def test_a_retry_after_an_attempt_cut_off_before_it_settled_keeps_its_files(
        tmp_path: Path, remote: Path) -> None:
    """The worker died mid-run: the checkout's HEAD is still where the run began; the retry
    here puts the branch at the last pushed commit and keeps the files as they are."""
    root = asyncio.run(prepare(_job(remote), tmp_path / "data"))
    publisher = Publisher(root, BRANCH)
    (root / "a.txt").write_text("a\n")
    assert asyncio.run(publisher.publish("iteration 1")) is Push.PUSHED
    (root / "partial.txt").write_text("half of iteration 2\n")  # then kill -9
    asyncio.run(prepare(_job(remote), tmp_path / "data"))
    assert _git(root, "rev-parse", "HEAD") == publisher.head
    assert (root / "partial.txt").read_text() == "half of iteration 2\n"
    assert _git(root, "status", "--porcelain") == "?? partial.txt"


def test_feature_metadata_is_published_where_gitignore_hides_automaker(
        tmp_path: Path, remote: Path) -> None:
    """As aidd's checkpoints record it (a retry on another machine needs the features); the
    runtime files stay out either way."""
    root = asyncio.run(prepare(_job(remote), tmp_path / "data"))
    (root / ".gitignore").write_text(".automaker/\n")
    made = root / ".automaker" / "features" / "new" / "feature.json"
    made.parent.mkdir(parents=True)
    made.write_text('{"id": "new"}\n')
    (root / ".automaker" / "todo.md").write_text("- [ ] x\n")
    (root / ".automaker" / "events.jsonl").write_text("{}\n")
    end = CheckpointStore(root, "run1", os.environ).record("001-end")
    publisher = Publisher(root, BRANCH)
    assert asyncio.run(publisher.publish("iteration 1", end.commit)) is Push.PUSHED
    from_checkpoint = _git(remote, "rev-parse", f"{BRANCH}^{{tree}}")
    (root / "more.txt").write_text("more\n")
    assert asyncio.run(publisher.publish("end of run")) is Push.PUSHED  # a snapshot
    assert _git(remote, "ls-tree", "-r", "--name-only", BRANCH).split() == [
        ".automaker/features/new/feature.json", ".automaker/todo.md", ".gitignore",
        "README.md", "more.txt"]
    assert _git(remote, "diff", "--name-only", from_checkpoint, BRANCH) == "more.txt"


def test_iterations_ending_within_one_look_get_a_commit_each(
        tmp_path: Path, remote: Path) -> None:
    """Two quick iterations and a third without a checkpoint, all seen at one look: one
    commit per iteration, the first two exactly as their checkpoints recorded them."""
    root = asyncio.run(prepare(_job(remote), tmp_path / "data"))
    store = CheckpointStore(root, "run1", os.environ)
    events = []
    for number in (1, 2):
        (root / f"it{number}.txt").write_text(f"{number}\n")
        point = store.record(f"{number:03d}-end")
        events += [{"event": "checkpoint", "number": number, "label": f"{number:03d}-end",
                    "commit": point.commit},
                   {"event": "iteration_end", "number": number, "result": 0}]
    (root / "it3.txt").write_text("3\n")
    events.append({"event": "iteration_end", "number": 3, "result": 1})  # no checkpoint
    progress = Progress()
    for event in events:
        progress = fold(progress, event)
    assert progress.ends == [f"1 {events[0]['commit']}", f"2 {events[2]['commit']}", "3"]
    publishing = Publishing(Publisher(root, BRANCH), "p", tmp_path / "p.log")
    progress = asyncio.run(publishing.after_iteration(progress))
    log = _git(remote, "log", "--reverse", "--format=%s", BRANCH).splitlines()
    assert log[-3:] == ["aidd fleet: p, iteration 1", "aidd fleet: p, iteration 2",
                        "aidd fleet: p, iteration 3"]
    for back, files in ((2, ["README.md", "it1.txt"]), (1, ["README.md", "it1.txt", "it2.txt"]),
                        (0, ["README.md", "it1.txt", "it2.txt", "it3.txt"])):
        assert _git(remote, "ls-tree", "-r", "--name-only", f"{BRANCH}~{back}").split() == files
    assert progress.pushed == _head(remote)
    assert asyncio.run(publishing.after_iteration(progress)) == progress  # nothing new


def test_a_progress_without_ends_from_an_older_worker_publishes_the_work_tree(
        tmp_path: Path, remote: Path) -> None:
    root = asyncio.run(prepare(_job(remote), tmp_path / "data"))
    (root / "w.txt").write_text("w\n")
    publishing = Publishing(Publisher(root, BRANCH), "p", tmp_path / "p.log")
    asyncio.run(publishing.after_iteration(Progress(ended=1, last_ended=4)))
    assert _git(remote, "log", "-1", "--format=%s", BRANCH) == "aidd fleet: p, iteration 4"
    assert "w.txt" in _git(remote, "ls-tree", "-r", "--name-only", BRANCH).split()


def test_no_program_the_agent_configured_in_the_checkout_runs(
        tmp_path: Path, remote: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent can write the checkout's .git/config: none of its filters, hooks, fsmonitor,
    gpg or transport programs runs in the fleet's add, commit or push (issue 27), so none
    sees the worker's TEMPORAL_* variables either; the work is pushed as it is."""
    monkeypatch.setenv("TEMPORAL_API_KEY", "the-workers-key")
    root = asyncio.run(prepare(_job(remote), tmp_path / "data"))
    markers = tmp_path / "markers"
    hostile_git_config(root / ".git", tmp_path / "programs", markers)
    receive = tmp_path / "programs" / "receive-pack"  # the other end of the push
    receive.write_text(f"#!/bin/sh\ntouch {markers / 'receive-pack'}\nexit 1\n")
    receive.chmod(0o755)
    with (root / ".git" / "config").open("a") as config:
        config.write(f'[remote "origin"]\n\treceivepack = {receive}\n')
    hostile_attributes(root)
    (root / "work.txt").write_bytes(b"done\r\n")
    assert asyncio.run(Publisher(root, BRANCH).publish("iteration 1")) is Push.PUSHED
    assert not markers.exists() or sorted(p.name for p in markers.iterdir()) == []
    assert _git(remote, "cat-file", "-s", f"{BRANCH}:work.txt") == "6"  # b"done\r\n" as is


def test_the_work_goes_to_the_jobs_url_whatever_the_checkout_says(
        tmp_path: Path, remote: Path) -> None:
    """The agent may rewrite the checkout's `remote.origin.url`, or add a `url.*.insteadOf`,
    to send the code elsewhere: the push goes to the job's own URL, and a URL rule in the
    checkout's config refuses the push (found while doing issue 27)."""
    job = _job(remote)
    root = asyncio.run(prepare(job, tmp_path / "data"))
    elsewhere = tmp_path / "elsewhere.git"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(elsewhere))
    _git(root, "config", "remote.origin.url", str(elsewhere))
    publisher = Publisher(root, BRANCH, job.git)
    (root / "work.txt").write_text("done\n")
    assert asyncio.run(publisher.publish("iteration 1")) is Push.PUSHED
    assert publisher.head == _head(remote)
    assert _git(elsewhere, "for-each-ref") == ""
    _git(root, "config", f"url.{elsewhere}.insteadOf", str(remote))
    (root / "more.txt").write_text("more\n")
    assert asyncio.run(publisher.publish("iteration 2")) is Push.FAILED
    assert "rewrites remote URLs" in publisher.error
    assert _git(elsewhere, "for-each-ref") == ""
