"""Progress from events.jsonl: read on from an offset, whole lines only, folded."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from aidd.fleet.progress import READ_LIMIT, advance
from aidd.fleet.records import Progress, State, state_for_exit
from tests.featurefiles import feature


def _append(root: Path, *events: dict[str, Any], torn: str = "") -> None:
    path = root / ".automaker" / "events.jsonl"
    path.parent.mkdir(exist_ok=True)
    with path.open("a") as fh:
        fh.writelines(json.dumps(e) + "\n" for e in events)
        fh.write(torn)


def test_iterations_results_and_cost_are_folded_in(tmp_path: Path) -> None:
    feature(tmp_path, "feature-1-a", passes=True, status="completed")
    feature(tmp_path, "feature-2-b")
    _append(tmp_path, {"event": "run_start"}, {"event": "iteration_start", "number": 1},
            {"event": "iteration_end", "number": 1, "result": 3, "cost_usd": 0.5})
    first = advance(Progress(), tmp_path)
    assert (first.iteration, first.result, first.cost_usd, first.last_event) == (
        1, 3, 0.5, "iteration_end")
    assert (first.features_passing, first.features_total) == (1, 2)
    _append(tmp_path, {"event": "iteration_start", "number": 2},
            {"event": "iteration_end", "number": 2, "result": 0, "cost_usd": None},
            torn='{"event": "iteration_st')
    second = advance(first, tmp_path)
    assert (second.iteration, second.result, second.cost_usd) == (2, 0, 0.5)
    assert advance(second, tmp_path) == second  # the torn line waits for its end


def test_a_shorter_file_is_read_from_its_start(tmp_path: Path) -> None:
    _append(tmp_path, {"event": "iteration_start", "number": 7})
    again = advance(Progress(offset=10_000, iteration=3), tmp_path)
    assert again.iteration == 7


def test_no_file_is_no_progress(tmp_path: Path) -> None:
    assert advance(Progress(offset=5), tmp_path) == Progress(offset=5)


def test_exit_codes_map_to_states() -> None:
    assert [state_for_exit(c) for c in (0, 73, 6, 124, 9, 1)] == [
        State.DONE, State.COMPLETE, State.STOPPED, State.STOPPED, State.BUDGET, State.FAILED]


def test_features_are_counted_as_the_status_counts_them(tmp_path: Path) -> None:
    """Done in either vocabulary (AutoMaker's verified without passes too); an invalid file is
    one more not done, as in `aidd --status` and the morning report."""
    feature(tmp_path, "feature-1-a", status="verified")
    feature(tmp_path, "feature-2-b")
    bad = tmp_path / ".automaker" / "features" / "feature-3-c"
    bad.mkdir()
    (bad / "feature.json").write_text("{not json")
    _append(tmp_path, {"event": "run_end", "exit_code": 0})
    done = advance(Progress(), tmp_path)
    assert (done.features_passing, done.features_total) == (1, 3)


def test_a_fifo_for_events_is_not_waited_on(tmp_path: Path) -> None:
    events = tmp_path / ".automaker" / "events.jsonl"
    events.parent.mkdir()
    os.mkfifo(events)
    assert advance(Progress(), tmp_path) == Progress()


def test_a_line_longer_than_a_read_does_not_stall_the_progress(tmp_path: Path) -> None:
    _append(tmp_path, torn="x" * (READ_LIMIT + 10) + "\n")
    _append(tmp_path, {"event": "iteration_start", "number": 4})
    progress = Progress()
    for _ in range(3):
        progress = advance(progress, tmp_path)
    assert progress.iteration == 4
