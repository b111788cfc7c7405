"""Stuck detection: without --max-iterations, three successful attempts in a row that change
nothing in the project end the phase; a change resets the count (SUP-70..72)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.session import failure, success
from tests.gitrepo import spy_git
from tests.unit.run.conftest import Loop


def _touch(name: str):  # type: ignore[no-untyped-def]
    def edit(project: Path) -> None:
        (project / name).write_text(f"{name}\n")

    return edit


def test_three_successes_without_a_change_end_the_phase(loop: Loop) -> None:
    run = loop.run(success())
    assert run.code == 0
    assert len(run.session.requests) == 3
    assert run.named("stuck")[0]["iterations"] == [1, 2, 3]
    assert [e["reason"] for e in run.named("phase_end")] == ["stuck"]


def _statuses(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    return spy_git(monkeypatch, lambda _git, argv: argv if "status" in argv else None)


@pytest.mark.parametrize("checkpoints", [True, False], ids=["checkpoints", "fingerprint"])
def test_a_change_resets_the_count(loop: Loop, checkpoints: bool,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """With checkpoints the attempt's NNN and NNN-end trees tell (issue 33: no `git status`
    of its own); without, the fingerprint does: the same verdicts. A change under
    .automaker/ is no change."""
    statuses = _statuses(monkeypatch)
    run = loop.run(success(_touch("a.py")), success(_touch("b.py")),
                   success(_touch(".automaker/notes.md")), no_checkpoints=not checkpoints)
    assert len(run.session.requests) == 5
    assert run.named("stuck")[0]["iterations"] == [3, 4, 5]
    assert bool(run.named("checkpoint")) == checkpoints
    assert (statuses == []) == checkpoints


def test_a_failure_without_a_change_neither_counts_nor_resets(loop: Loop) -> None:
    run = loop.run(success(), failure(), success(), success())
    assert len(run.session.requests) == 4
    assert run.named("stuck")[0]["iterations"] == [1, 3, 4]


def test_with_max_iterations_there_is_no_stuck_detection(loop: Loop) -> None:
    run = loop.run(success(), max_iterations=5)
    assert len(run.session.requests) == 5
    assert not run.named("stuck")
