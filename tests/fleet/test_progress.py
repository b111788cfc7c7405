"""Progress from events.jsonl: read on from an offset, whole lines only, folded."""

from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest

from aidd.fleet.progress import HOST_ENV, READ_LIMIT, advance, fold, resumed, this_host
from aidd.fleet.records import ENDS_KEPT, Progress, State, state_for_exit
from tests.featurefiles import feature


def _append(root: Path, *events: dict[str, Any], torn: str = "") -> None:
    path = root / ".automaker" / "events.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
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


def test_tokens_and_iterations_cut_off_by_a_signal_are_counted_for_a_retry() -> None:
    done = fold(Progress(), {"event": "iteration_end", "number": 1, "reason": "exit_status",
                             "tokens": {"input": 100, "output": 20, "cache_read": None}})
    cut = fold(done, {"event": "iteration_end", "number": 2, "reason": "signal",
                      "tokens": {"input": 7, "output": -5, "forged": 10**40}})
    assert (done.tokens, done.cut) == (120, 0)
    assert (cut.tokens, cut.cut, cut.ended) == (127, 1, 2)  # what is not a count is 0


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


def test_a_planted_deeply_nested_line_is_skipped(tmp_path: Path) -> None:
    """events.jsonl is the project's: a line nested past the stack's depth is not an event,
    never a RecursionError that ends the heartbeat (issue 27 item 14)."""
    _append(tmp_path, {"event": "iteration_start", "number": 1}, torn="[" * 100_000 + "\n")
    _append(tmp_path, {"event": "iteration_end", "number": 1, "result": 0})
    progress = advance(Progress(), tmp_path)
    assert (progress.iteration, progress.ended, progress.by_result) == (1, 1, {"0": 1})


def test_events_linked_out_of_the_project_are_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_text(json.dumps({"event": "iteration_start", "number": 9}) + "\n")
    root = tmp_path / "project"
    (root / ".automaker").mkdir(parents=True)
    (root / ".automaker" / "events.jsonl").symlink_to(outside)
    assert advance(Progress(), root) == Progress()


def test_a_line_longer_than_a_read_does_not_stall_the_progress(tmp_path: Path) -> None:
    _append(tmp_path, torn="x" * (READ_LIMIT + 10) + "\n")
    _append(tmp_path, {"event": "iteration_start", "number": 4})
    progress = Progress()
    for _ in range(3):
        progress = advance(progress, tmp_path)
    assert progress.iteration == 4


def test_results_ends_and_runs_are_tallied(tmp_path: Path) -> None:
    _append(tmp_path, {"event": "run_start", "run": "20261126T010000Z-41"},
            {"event": "iteration_end", "number": 1, "result": 3, "cost_usd": None,
             "ts": "2026-11-26T01:00:05.000Z"},
            {"event": "iteration_end", "number": 2, "result": 0, "cost_usd": 0.25,
             "ts": "2026-11-26T01:00:09.000Z"},
            {"event": "iteration_end", "number": 3, "result": 3, "cost_usd": 0.5,
             "ts": "2026-11-26T01:00:12.000Z"},
            {"event": "iteration_end", "number": 4, "result": True, "cost_usd": True})
    running = advance(Progress(), tmp_path)
    assert running.by_result == {"3": 2, "0": 1}  # a result that is no integer is not one
    assert (running.ended, running.costs_unknown, running.cost_usd) == (4, 2, 0.75)
    assert (running.run_id, running.run_reason) == ("20261126T010000Z-41", "")
    assert running.last_end_at == "2026-11-26T01:00:12.000Z"
    _append(tmp_path, {"event": "run_end", "exit_code": 0, "reason": "done",
                       "ts": "2026-11-26T01:00:13.000Z"})
    ended = advance(running, tmp_path)
    assert (ended.run_reason, ended.last_end_at) == ("done", "2026-11-26T01:00:13.000Z")
    _append(tmp_path, {"event": "run_start", "run": "20261126T020000Z-42"})
    again = advance(ended, tmp_path)  # a retry's aidd: a new run, not ended yet
    assert (again.run_id, again.run_reason, again.by_result) == (
        "20261126T020000Z-42", "", {"3": 2, "0": 1})


def test_old_heartbeat_details_still_decode() -> None:
    """Details a worker of the last version sent (no by_result, hosts, ...): the defaults."""
    value_to_type = pytest.importorskip("temporalio.converter").value_to_type
    old = {"offset": 120, "last_event": "iteration_end", "iteration": 2, "result": 0,
           "cost_usd": 0.5, "features_passing": 1, "features_total": 2, "host": "a", "pid": 7,
           "attempt": 1, "ended": 2, "last_ended": 2, "pushed": ""}
    found = value_to_type(Progress, old)
    assert (found.offset, found.ended, found.by_result, found.hosts) == (120, 2, {}, [])
    carried = resumed(found, Path("/nowhere"), "a")
    assert (carried.offset, carried.hosts) == (120, ["a"])  # same host, same file: read on


def test_a_first_attempt_starts_at_the_end_of_the_events_so_far(tmp_path: Path) -> None:
    _append(tmp_path, {"event": "iteration_end", "number": 1, "result": 0, "cost_usd": 1.0})
    size = (tmp_path / ".automaker" / "events.jsonl").stat().st_size
    first = resumed(None, tmp_path, "here")
    assert (first.offset, first.host, first.hosts, first.root) == (size, "here", ["here"],
                                                                    str(tmp_path))
    assert advance(first, tmp_path).by_result == {}  # an earlier run's events are not this run's


def test_a_retry_on_the_same_host_reads_on_from_the_carried_offset(tmp_path: Path) -> None:
    _append(tmp_path, {"event": "iteration_end", "number": 1, "result": 0, "cost_usd": 1.0})
    first = resumed(None, tmp_path, "here")
    _append(tmp_path, {"event": "iteration_end", "number": 2, "result": 3, "cost_usd": 0.5})
    lost = advance(first, tmp_path)  # the attempt's last heartbeat, then its worker was lost
    _append(tmp_path, {"event": "iteration_end", "number": 3, "result": 1, "cost_usd": 0.25})
    retry = advance(resumed(lost, tmp_path, "here"), tmp_path)
    assert retry.hosts == ["here"]
    assert (retry.by_result, retry.cost_usd) == ({"3": 1, "1": 1}, 0.75)


def test_a_retry_on_another_host_starts_at_its_own_files_end(tmp_path: Path) -> None:
    """The carried offset is of the other machine's events.jsonl: meaningless here. The
    other checkout's older events (a run before this one) are not counted."""
    here, there = tmp_path / "b", tmp_path / "a"
    _append(there, {"event": "iteration_end", "number": 1, "result": 3, "cost_usd": 0.5})
    on_a = advance(resumed(None, there, "a"), there)  # nothing of this run yet on a
    _append(there, {"event": "iteration_end", "number": 2, "result": 0, "cost_usd": 1.0})
    on_a = advance(on_a, there)
    assert (on_a.by_result, on_a.offset > 0) == ({"0": 1}, True)
    for number in (7, 8, 9):  # b's checkout: an older run's events, longer than a's offset
        _append(here, {"event": "iteration_end", "number": number, "result": 1,
                       "cost_usd": 2.0, "pad": "x" * 100})
    on_b = resumed(on_a, here, "b")
    assert on_b.offset == (here / ".automaker" / "events.jsonl").stat().st_size
    assert (on_b.host, on_b.hosts, on_b.root) == ("b", ["a", "b"], str(here))
    _append(here, {"event": "iteration_end", "number": 10, "result": 0, "cost_usd": 0.25})
    done = advance(on_b, here)
    assert (done.by_result, done.cost_usd, done.ended) == ({"0": 2}, 1.25, 2)
    back = resumed(done, there, "a")  # a third attempt, on a again: its checkout moved on
    assert (back.hosts, back.offset) == (["a", "b"],
                                         (there / ".automaker" / "events.jsonl").stat().st_size)


def test_a_retry_in_another_checkout_of_the_same_host_starts_at_its_end(tmp_path: Path) -> None:
    """Two workers on one host with their own data dirs: two checkouts, two files."""
    one, two = tmp_path / "one", tmp_path / "two"
    _append(one, {"event": "iteration_end", "number": 1, "result": 0, "cost_usd": 1.0})
    _append(two, *({"event": "iteration_end", "number": n, "result": 1} for n in range(5)))
    carried = replace(resumed(None, one, "h"), offset=0)
    moved = resumed(carried, two, "h")
    assert moved.offset == (two / ".automaker" / "events.jsonl").stat().st_size
    assert moved.hosts == ["h"]


def test_this_host_is_the_override_else_the_host_name() -> None:
    assert this_host({HOST_ENV: "m2"}) == "m2"
    assert this_host({}) == socket.gethostname()


def test_forged_events_cannot_swell_the_progress() -> None:
    """events.jsonl is the agent's to write too: what the heartbeat keeps of it stays small."""
    huge = "x" * 1_000_000
    progress = Progress()
    for event in ({"event": huge, "ts": huge},
                  {"event": "run_start", "run": huge},
                  {"event": "checkpoint", "label": "001-end", "number": 1, "commit": huge},
                  *({"event": "iteration_end", "number": 1, "result": 10 ** 4000 + i,
                     "ts": huge} for i in range(50)),
                  {"event": "run_end", "reason": huge}):
        progress = fold(progress, event)
    assert len(json.dumps(asdict(progress))) < 10_000
    assert progress.end_checkpoint == ""
    assert progress.by_result == {}
    assert progress.ended == 50
    assert len(progress.ends) == ENDS_KEPT


def test_a_forged_cost_is_an_unknown_one() -> None:
    """events.jsonl is the agent's to write too: NaN, Infinity or a negative cost is no cost
    (issue 27), so the heartbeat's total stays a number."""
    progress = Progress()
    for cost in (float("nan"), float("inf"), -1e9, 0.25):
        progress = fold(progress, {"event": "iteration_end", "number": 1, "result": 0,
                                   "cost_usd": cost})
    assert (progress.cost_usd, progress.costs_unknown) == (0.25, 3)
