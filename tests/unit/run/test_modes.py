"""Modes: one wins when several flags are given (said once at start), and with
--stop-when-done (the default) TODO and in-progress modes end their phase when no work is left
(PRM-3, CMP-30)."""

from __future__ import annotations

from pathlib import Path

from aidd.project.paths import ProjectPaths
from tests.fakes.session import success
from tests.featurefiles import feat, write
from tests.unit.run.conftest import Loop


def _todo(text: str):  # type: ignore[no-untyped-def]
    def edit(project: Path) -> None:
        (project / ".automaker" / "todo.md").write_text(text)

    return edit


def test_todo_mode_ends_when_no_item_is_left(loop: Loop) -> None:
    _todo("- [ ] add a cart\n")(loop.paths.root)
    run = loop.run(success(_todo("- [x] add a cart\n")), todo=True, max_iterations=5)
    assert run.code == 0
    assert run.session.kinds == ["todo"]
    (done,) = run.named("mode_done")
    assert done == {**done, "kind": "todo", "reason": "no_actionable_todo"}


def test_without_stop_when_done_todo_mode_runs_to_the_limit(loop: Loop) -> None:
    _todo("- [x] add a cart\n")(loop.paths.root)
    run = loop.run(success(), todo=True, stop_when_done=False, max_iterations=2)
    assert run.session.kinds == ["todo", "todo"]


def test_in_progress_mode_ends_when_no_feature_is_in_progress(loop: Loop) -> None:
    paths = ProjectPaths(loop.paths.root)
    write(paths, "feature-1-cart", feat("feature-1-cart", status="in_progress", passes=False))

    def finish(project: Path) -> None:  # done with it; another feature still waits
        write(ProjectPaths(project), "feature-1-cart",
              feat("feature-1-cart", status="completed", passes=True))
        write(ProjectPaths(project), "feature-2-pay",
              feat("feature-2-pay", status="backlog", passes=False))

    run = loop.run(success(finish), in_progress=True, max_iterations=5)
    assert run.session.kinds == ["in-progress"]
    assert run.named("mode_done")[0]["kind"] == "in-progress"


def test_several_mode_flags_one_wins_and_the_run_says_so(loop: Loop) -> None:
    _todo("- [ ] add a cart\n")(loop.paths.root)
    run = loop.run(success(), todo=True, validate=True, max_iterations=1)
    assert run.said("several mode flags given (--todo, --validate); --todo wins")
    assert run.named("run_start")[0]["mode"] == "todo"
    assert run.session.kinds == ["todo"]
