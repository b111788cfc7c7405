"""What the loop itself does each iteration (issue 33): no fsync of what it writes again or
only records (status.md, the prompt, the log)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fakes.session import success
from tests.unit.run.conftest import Loop, ScheduledClock


def _fsyncs(tmp_path: Path, iterations: int, monkeypatch: pytest.MonkeyPatch) -> int:
    loop = Loop(tmp_path / str(iterations), ScheduledClock())
    loop.paths.automaker.mkdir(parents=True)
    loop.paths.app_spec.write_text("# Shop\nA small shop.\n")
    synced: list[int] = []
    real = os.fsync

    def spy(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    turns = [success(lambda root, n=n: (root / f"{n}.txt").write_text("x"))
             for n in range(iterations)]
    run = loop.run(*turns, max_iterations=iterations)
    monkeypatch.undo()
    assert run.code == 0
    assert len(run.named("iteration_end")) == iterations
    return len(synced)


def test_an_iteration_fsyncs_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """status.md, NNN.prompt.md and NNN.log were fsynced each iteration (3 waits on the disk,
    7 ms each on a busy one); the start's files still are (the project's state, scaffolding)."""
    once = _fsyncs(tmp_path, 1, monkeypatch)
    assert once > 0  # the start's own atomic writes
    assert _fsyncs(tmp_path, 4, monkeypatch) == once
