"""Completion in two steps: the first time every feature passes and no TODO blocks, one more
attempt reviews the project (pending); if it still passes after that, the project is complete
and the run exits 73 (CMP-10). A directive run never stops for completion."""

from __future__ import annotations

from pathlib import Path

from aidd.project.paths import ProjectPaths
from tests.fakes.session import success
from tests.featurefiles import feat, write
from tests.unit.run.conftest import Loop


def _features(passing: bool):  # type: ignore[no-untyped-def]
    def edit(project: Path) -> None:
        paths = ProjectPaths(project)
        for n in (1, 2):
            write(paths, f"feature-{n}-x", feat(f"feature-{n}-x", passes=passing,
                                                status="completed" if passing else "backlog"))

    return edit


def test_a_review_attempt_then_exit_73(loop: Loop) -> None:
    run = loop.run(success(_features(passing=True)), success())
    assert run.code == 73
    assert run.session.kinds == ["initializer", "todo"]  # the second is the review
    assert [e["state"] for e in run.named("completion")] == ["pending", "confirmed"]
    assert run.paths.completed.exists()
    assert not run.paths.completion_pending.exists()
    assert run.run_end["reason"] == "completed"


def test_a_review_that_breaks_a_feature_resets_completion(loop: Loop) -> None:
    run = loop.run(success(_features(passing=True)), success(_features(passing=False)),
                   success(_features(passing=True)), success(), max_iterations=10)
    assert run.code == 73
    assert [e["state"] for e in run.named("completion")] == [
        "pending", "reset", "pending", "confirmed"]
    assert run.session.kinds[:2] == ["initializer", "todo"]


def test_an_already_completed_project_exits_73_without_an_attempt(loop: Loop) -> None:
    _features(passing=True)(loop.paths.root)
    loop.paths.completed.write_text("done\n")
    run = loop.run(success())
    assert run.code == 73
    assert run.session.requests == []
    assert run.said("project already completed")


def test_a_directive_run_does_not_stop_for_completion(loop: Loop) -> None:
    _features(passing=True)(loop.paths.root)
    run = loop.run(success(), prompt="tidy the README", max_iterations=2)
    assert run.code == 0
    assert run.session.kinds == ["directive", "directive"]
    assert not run.named("completion")
