"""Checkpoints in the loop: before each attempt, before a kill and at its end, under private
refs; a project without git gets its own repository; --no-checkpoints records none; a failure
is one warning and the run goes on (issue 15)."""

from __future__ import annotations

from pathlib import Path

from aidd.session.request import AttemptRequest
from tests.fakes.session import success
from tests.gitrepo import git
from tests.unit.run.conftest import Loop

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
