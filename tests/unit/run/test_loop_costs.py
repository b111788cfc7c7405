"""What the loop itself does (issue 33): no fsync each iteration of what it writes again or
only records (status.md, the prompt, the log); no template compiled again at a later start."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jinja2
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


def test_a_later_start_compiles_no_template(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The templates the first start compiled are kept in the user's cache folder
    (~/.cache/aidd, the run's HOME here): the next start parses none of them."""
    parsed: list[str | None] = []
    real = jinja2.Environment._parse

    def spy(env: jinja2.Environment, source: str, name: str | None,
            filename: str | None) -> Any:
        parsed.append(name)
        return real(env, source, name, filename)

    monkeypatch.setattr(jinja2.Environment, "_parse", spy)
    loop = Loop(tmp_path, ScheduledClock())
    loop.paths.automaker.mkdir(parents=True)
    loop.paths.app_spec.write_text("# Shop\nA small shop.\n")
    first = loop.run(success(), max_iterations=1)
    assert first.code == 0
    assert "coding.md" in parsed
    parsed.clear()
    again = loop.run(success(), max_iterations=1)
    assert again.code == 0
    assert parsed == []
    assert (tmp_path / "home" / ".cache" / "aidd" / "templates").is_dir()
