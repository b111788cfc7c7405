"""status.md before each attempt (FEA-30) from what the run knows (issue 33): it reads no
events, whatever the length of the night, and says what `--status` reads from outside."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aidd import events as events_module
from aidd.reports.status import build_status
from aidd.reports.statustext import render_status_text
from aidd.session.request import AttemptRequest
from tests.fakes.session import failure, rate_limited, success
from tests.unit.run.conftest import Loop, ScheduledClock


def _edit(name: str) -> Any:
    return lambda root: (root / name).write_text(name)


def _events_read(tmp_path: Path, iterations: int, monkeypatch: pytest.MonkeyPatch) -> int:
    loop = Loop(tmp_path / str(iterations), ScheduledClock())
    loop.paths.automaker.mkdir(parents=True)
    loop.paths.app_spec.write_text("# Shop\nA small shop.\n")
    reads: list[Path] = []
    real = events_module.event_lines  # what read_events and load_events read the file with

    def spy(path: Path, root: Path | None = None) -> Any:
        reads.append(path)
        return real(path, root)

    monkeypatch.setattr(events_module, "event_lines", spy)
    turns = [success(_edit(f"{n}.txt")) for n in range(iterations)]
    run = loop.run(*turns, max_iterations=iterations)
    monkeypatch.undo()
    assert run.code == 0
    assert loop.paths.status.is_file()
    return len(reads)


def test_a_runs_status_md_reads_no_events(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading all of events.jsonl before each attempt made iteration 5,000 of a night pay for
    20,000 events: the run adds them up as it emits them instead."""
    assert _events_read(tmp_path, 1, monkeypatch) == _events_read(tmp_path, 4, monkeypatch) == 0


def test_a_runs_status_md_says_what_status_reads_from_outside(loop: Loop) -> None:
    """During each attempt, status.md (written just before it) is `--status`'s text but for
    its time: health (failures, a rate limit), the last iteration, running with pid."""
    texts: list[tuple[str, str]] = []

    def compare(request: AttemptRequest) -> None:
        paths = loop.paths
        outside = render_status_text(build_status(paths, None, loop.clock.now()))
        texts.append((_untimed(paths.status.read_text()), _untimed(outside)))

    turns = [success(_edit("a.txt"), during=compare), failure(during=compare),
             rate_limited(30, during=compare), failure(result=3, during=compare),
             success(_edit("b.txt"), during=compare)]
    run = loop.run(*turns, max_iterations=4)
    assert run.code == 0, run.console
    assert len(texts) == 5
    for inside, outside in texts:
        assert inside == outside
    last = texts[-1][0]
    assert "Running: pid " in last
    assert "Health of the last run: failed" in last
    assert "Last iteration: 4, failure (result 3)" in last


def _untimed(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith("Generated:"))
