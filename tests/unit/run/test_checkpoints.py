"""Checkpoints in the loop: before each attempt, before a kill and at its end, under private
refs; a project without git gets its own repository; --no-checkpoints records none; a failure
is one warning and the run goes on (issue 15)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aidd.project import activity
from aidd.project.git import Done, Git
from aidd.session.request import AttemptRequest
from tests.fakes.session import success
from tests.gitrepo import git
from tests.unit.run.conftest import Loop
from tests.waiting import wait_for

RUN_REFS = "refs/aidd/checkpoints"



def _write(name: str, text: str):  # type: ignore[no-untyped-def]
    def edit(project: Path) -> None:
        (project / name).write_text(text)

    return edit


def _killed(request: AttemptRequest) -> None:
    assert request.before_kill is not None
    request.before_kill()  # what the session does right before it kills the agent's tree


def test_each_attempt_is_recorded_before_and_after_without_touching_the_user(loop: Loop) -> None:
    root = loop.paths.root
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# Shop\n")
    git(root, "add", "README.md")
    git(root, "commit", "-qm", "first")
    user = (git(root, "rev-parse", "HEAD"), git(root, "diff", "--cached"),
            git(root, "stash", "list"), git(root, "branch", "--list"))
    run = loop.run(success(_write("a.py", "a\n")), success(_write("b.py", "b\n"), during=_killed),
                   max_iterations=2)
    assert run.code == 0
    labels = [e["label"] for e in run.named("checkpoint")]
    assert labels == ["001", "001-end", "002", "002-prekill", "002-end"]
    refs = git(root, "for-each-ref", "--format=%(refname)", RUN_REFS).split()
    run_id = run.run_end["run"]
    assert refs == sorted(f"{RUN_REFS}/{run_id}/{label}" for label in labels)
    assert git(root, "show", f"{RUN_REFS}/{run_id}/001-end:a.py") == "a\n"
    assert "b.py" not in git(root, "ls-tree", "--name-only", f"{RUN_REFS}/{run_id}/002")
    assert (git(root, "rev-parse", "HEAD"), git(root, "diff", "--cached"),
            git(root, "stash", "list"), git(root, "branch", "--list")) == user
    assert [e["files"] for e in run.named("checkpoint")][1] >= 1


def test_a_project_without_git_gets_a_private_repository(loop: Loop) -> None:
    run = loop.run(success(_write("a.py", "a\n")), max_iterations=1)
    private = loop.paths.automaker / "checkpoints.git"
    assert private.is_dir()
    assert not (loop.paths.root / ".git").exists()
    (end,) = [e for e in run.named("checkpoint") if e["label"] == "001-end"]
    assert git(private, "--git-dir", str(private), "show", f"{end['commit']}:a.py") == "a\n"


def test_no_checkpoints_records_none(loop: Loop) -> None:
    run = loop.run(success(), max_iterations=2, no_checkpoints=True)
    assert run.code == 0
    assert not run.named("checkpoint")
    assert not (loop.paths.automaker / "checkpoints.git").exists()


def test_without_git_the_run_warns_once_and_goes_on(loop: Loop) -> None:
    run = loop.run(success(), max_iterations=2, path="/nonexistent")
    assert run.code == 0
    assert len(run.session.requests) == 2
    failed = [(e["label"], e["error"]) for e in run.named("checkpoint_failed")]
    assert failed == [("001", "git not found on PATH")]
    assert "checkpoint 001 failed (git not found on PATH); no more checkpoints in this run" \
        in run.console


def test_only_the_newest_runs_keep_their_checkpoints(loop: Loop) -> None:
    runs = [loop.run(success(_write("a.py", f"{n}\n")), max_iterations=1, checkpoint_keep_runs=2)
            for n in range(3)]
    private = loop.paths.automaker / "checkpoints.git"
    refs = git(private, "--git-dir", str(private), "for-each-ref", "--format=%(refname)",
               RUN_REFS).split()
    kept = sorted({ref.split("/")[3] for ref in refs})
    started = [e["run"] for e in runs[-1].named("run_start")]  # one events.jsonl, three runs
    assert len(set(started)) == 3
    assert kept == sorted(started[1:])


def test_once_the_file_watcher_runs_an_attempt_costs_one_git_run(
        loop: Loop, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: the run's file watcher proves the tree unchanged between one attempt's end
    and the next one's start, so that checkpoint is the end one's; each end is one `add`, its
    tree, commit and ref written by aidd, its changed files from the add."""
    monkeypatch.setattr(activity, "QUIET_WAIT_S", 10.0)  # watchdog may hold events 0.5 s
    runs: list[str] = []
    real = Git.run

    def run(self: Git, *args: str, stdin: bytes | None = None) -> Done:
        runs.append(args[0])
        return real(self, *args, stdin=stdin)

    def watched(request: AttemptRequest) -> None:  # the watch is up before the first end
        files = request.file_activity
        assert files is not None
        wait_for(lambda: files() is not None, 30, "the file watcher")

    monkeypatch.setattr(Git, "run", run)
    done = loop.run(success(_write("a.py", "a\n"), during=watched),
                    success(_write("b.py", "b\n")), success(_write("c.py", "c\n")),
                    max_iterations=3)
    assert done.code == 0
    marks = [e["label"] for e in done.named("checkpoint")]
    assert marks == ["001", "001-end", "002", "002-end", "003", "003-end"]
    commits = [e["commit"] for e in done.named("checkpoint")]
    assert commits[2] == commits[1]
    assert commits[4] == commits[3]
    assert [e["files"] for e in done.named("checkpoint")][3] == 1  # b.py, from the add
    # Only the first checkpoint's tree is git's (its files from ls-tree); each end from then
    # on costs an add.
    assert runs[runs.index("write-tree") + 1:] == ["ls-tree", "add", "add", "add"]
