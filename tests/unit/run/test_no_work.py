"""No-work detection: a success without a tool call, without a change to the project and with
little text is result 75, a failure: it counts for --quit-on-abort and stuck detection, and a
completion review that did no work confirms nothing (issue 15)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from aidd.project.paths import ProjectPaths
from aidd.run.nowork import SMALL_TEXT_CHARS
from aidd.session.outcome import Reason
from aidd.session.runner import AttemptRequest
from tests.fakes.session import no_work, success
from tests.featurefiles import feat, write
from tests.unit.run.conftest import Loop

CHECKPOINTS = pytest.mark.parametrize("no_checkpoints", [False, True],
                                      ids=["checkpoints", "fingerprints"])


def _touch(name: str):  # type: ignore[no-untyped-def]
    def edit(project: Path) -> None:
        (project / name).write_text(f"{name}\n")

    return edit


def _features(passing: bool):  # type: ignore[no-untyped-def]
    def edit(project: Path) -> None:
        for n in (1, 2):
            write(ProjectPaths(project), f"feature-{n}-x",
                  feat(f"feature-{n}-x", passes=passing,
                       status="completed" if passing else "backlog"))

    return edit


@CHECKPOINTS
def test_a_success_that_did_nothing_is_result_75(loop: Loop, no_checkpoints: bool) -> None:
    run = loop.run(no_work(), max_iterations=1, no_checkpoints=no_checkpoints)
    assert run.code == 0  # a phase ended by --max-iterations is a normal end (SUP-64)
    (end,) = run.named("iteration_end")
    assert end == {**end, "result": 75, "outcome": "failure", "reason": "no_work",
                   "tool_calls": 0, "assistant_chars": 42}
    assert run.said("no work: the agent exited 0 without a tool call or a change "
                    "(42 characters of text)")
    log = (loop.paths.iterations / "001.log").read_text()
    assert "no work: the agent exited 0" in log
    assert "finished: result 75 (failure, no_work)" in log
    assert run.run_end["failures"] == 1


@CHECKPOINTS
@pytest.mark.parametrize("edit", [_touch("a.py"), _features(passing=True)],
                         ids=["source", "feature metadata"])
def test_a_change_is_work(loop: Loop, no_checkpoints: bool, edit: object) -> None:
    _features(passing=False)(loop.paths.root)
    (loop.paths.root / "a.py").write_text("before\n")
    run = loop.run(no_work(edit), max_iterations=1, no_checkpoints=no_checkpoints)
    (end,) = run.named("iteration_end")
    assert end == {**end, "result": 0, "outcome": "success", "tool_calls": 0}
    assert not run.said("no work")


def test_a_tool_call_or_enough_text_is_work(loop: Loop) -> None:
    run = loop.run(no_work(), no_work(tool_calls=1),
                   no_work(assistant_chars=SMALL_TEXT_CHARS), max_iterations=3)
    assert [e["result"] for e in run.named("iteration_end")] == [75, 0, 0]


def test_an_exit_1_treated_as_success_is_not_judged(loop: Loop) -> None:
    """opencode's exit 1 without an error says "nothing more to do" (EXIT-3, AC-35)."""
    run = loop.run(no_work(reason=Reason.EXIT1_SUCCESS), max_iterations=1)
    (end,) = run.named("iteration_end")
    assert end == {**end, "result": 0, "reason": "exit1_success"}


def test_without_json_events_nothing_is_known_and_nothing_is_guessed(loop: Loop) -> None:
    run = loop.run(no_work(tool_calls=None), max_iterations=1)
    (end,) = run.named("iteration_end")
    assert end == {**end, "result": 0, "tool_calls": None}


def test_quit_on_abort_exits_75(loop: Loop) -> None:
    run = loop.run(no_work(), quit_on_abort=2, max_iterations=10)
    assert run.code == 75
    assert len(run.session.requests) == 2
    assert run.run_end == {**run.run_end, "reason": "quit_on_abort", "failures": 2}


def test_three_attempts_without_work_end_the_phase_as_stuck(loop: Loop) -> None:
    run = loop.run(success(_touch("a.py")), no_work())
    assert run.code == 0
    assert len(run.session.requests) == 4
    assert run.named("stuck")[0]["iterations"] == [2, 3, 4]
    assert [e["result"] for e in run.named("iteration_end")] == [0, 75, 75, 75]


def test_a_review_without_work_confirms_nothing_and_runs_again(loop: Loop) -> None:
    run = loop.run(success(_features(passing=True)), no_work(), success(), max_iterations=10)
    assert run.code == 73
    assert run.session.kinds == ["initializer", "todo", "todo"]  # the review, twice
    assert [e["result"] for e in run.named("iteration_end")] == [0, 75, 0]
    assert run.said("the completion review did no work (result 75): completion not "
                    "confirmed, reviewing again")
    assert [e["state"] for e in run.named("completion")] == ["pending", "confirmed"]
    assert run.paths.completed.exists()


def test_without_git_the_fingerprints_decide(loop: Loop) -> None:
    run = loop.run(no_work(), max_iterations=1, path="/nonexistent")
    assert [e["result"] for e in run.named("iteration_end")] == [75]


def test_when_the_end_checkpoint_fails_nothing_is_guessed(loop: Loop) -> None:
    def break_the_store(request: AttemptRequest) -> None:
        shutil.rmtree(request.project_dir / ".automaker" / "checkpoints.git")

    run = loop.run(no_work(during=break_the_store), max_iterations=1)
    assert [e["label"] for e in run.named("checkpoint")] == ["001"]
    assert [e["result"] for e in run.named("iteration_end")] == [0]
