"""The loop's plain path: attempts, the log of each, counting and --max-iterations."""

from __future__ import annotations

import pytest

from aidd.prompts.context import PromptContext
from aidd.prompts.render import PromptRenderer
from tests.fakes.session import failure, success
from tests.unit.run.conftest import Loop


def test_max_iterations_runs_that_many_attempts_and_exits_0(loop: Loop) -> None:
    run = loop.run(success(), max_iterations=3)
    assert run.code == 0
    assert run.session.kinds == ["initializer"] * 3
    assert run.logs() == ["001.log", "002.log", "003.log"]
    assert run.run_end["reason"] == "done"
    assert run.run_end["iterations"] == 3
    assert [e["reason"] for e in run.named("phase_end")] == ["max_iterations"]


def test_failures_are_counted_but_do_not_end_the_run_without_quit_on_abort(loop: Loop) -> None:
    run = loop.run(failure(), max_iterations=4)
    assert run.code == 0
    assert run.run_end["failures"] == 4
    assert run.run_end["iterations"] == 4


def test_the_start_renders_the_sample_prompts_only_for_an_override(
        loop: Loop, monkeypatch: pytest.MonkeyPatch) -> None:
    """PRM-13, AC-24, issue 33: an override is rendered once with a sample context before any
    agent starts (an undefined variable fails the run then); without one the start renders
    nothing (aidd's own templates render in tests/unit/prompts), so the one attempt of this
    initializer run renders its own prompt and nudge only."""
    rendered: list[str] = []
    real = PromptRenderer.render

    def spy(self: PromptRenderer, name: str, context: PromptContext) -> str:
        rendered.append(name)
        return real(self, name, context)

    monkeypatch.setattr(PromptRenderer, "render", spy)
    assert loop.run(success(), max_iterations=1).code == 0
    assert rendered == ["initializer.md", "nudge.md"]  # the attempt's prompt and its nudge
    rendered.clear()
    override = loop.paths.automaker / "prompts" / "_common" / "wrap-up.md"
    override.parent.mkdir(parents=True)
    override.write_text('{% include "builtin/_common/wrap-up.md" %}\nOUR HOUSE RULE.\n')
    assert loop.run(success(), max_iterations=1).code == 0
    assert {"coding.md", "todo.md", "nudge.md"} <= set(rendered), rendered
