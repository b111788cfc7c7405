"""An events.jsonl of a `--parallel 3` run as issue 29 has aidd write it, synthesised for the
views' tests (watch, --status, the morning report): each attempt's events carry `slot` and
`feature`, the slots' attempts overlap in the file, and the merge queue's `merge` events end
them (merged, conflict, merge_red)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

START = datetime(2026, 11, 27, 1, 0, tzinfo=UTC)
RUN = "20261127T010000Z-4242"


def stamp(seconds: float) -> str:
    return (START + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def event(at: float, name: str, **fields: Any) -> dict[str, Any]:
    return {"v": 1, "ts": stamp(at), "run": RUN, "event": name, **fields}


def run_start(at: float = 0.0, max_iterations: int | None = 20) -> dict[str, Any]:
    return event(at, "run_start", aidd_version="0.1.0", pid=4242, host="vm",
                 project_dir="/srv/shop", cli="opencode", cli_version="1.0", cli_path="/bin/oc",
                 mode="default", models={"base": None}, limits={
                     "max_iterations": max_iterations, "max_cost_usd": 10.0}, flags=[],
                 filters=None, audits=[], config_sources=[])


def start(at: float, number: int, slot: int, feature: str, kind: str = "coding") -> dict[str, Any]:
    return event(at, "iteration_start", number=number, index=number, of=20, phase="main",
                 kind=kind, reason="features open", model=None, prompt_bytes=9000,
                 log=f".automaker/iterations/{number:03d}.log",
                 prompt_file=f".automaker/iterations/{number:03d}.prompt.md",
                 feature=feature, slot=slot)


def end(at: float, began: float, number: int, slot: int, feature: str,
        result: int = 0) -> dict[str, Any]:
    return event(at, "iteration_end", number=number, result=result,
                 outcome="success" if result == 0 else "failure",
                 reason="exit_status", exit_status=result, duration_s=at - began,
                 bytes=2000, tokens={"input": 1000, "output": 200, "reasoning": 0,
                                     "cache_read": 0, "cache_write": 0},
                 cost_usd=0.05, cost_estimated=False, model=None, conversation_id=None,
                 tool_calls=4, assistant_chars=300, feature=feature, slot=slot)


def merge(at: float, number: int, slot: int, feature: str, result: str) -> dict[str, Any]:
    sent_back = result in ("conflict", "merge_red")
    return event(at, "merge", number=number, branch=f"aidd/{feature}", result=result,
                 reason=result if sent_back else None,
                 why="src/app.py: content conflict" if result == "conflict" else None,
                 commit="abc1234" if result == "merged" else None, slot=slot, feature=feature)


def parallel_run(ended: bool = False) -> list[dict[str, Any]]:
    """Three slots: 001 (slot 1) merged, 002 (slot 2) sent back by a conflict, 003 (slot 3)
    by a red merged gate; 004-006 then run at once, interleaved; with `ended`, they finish and
    the run ends."""
    events = [run_start(),
              event(0, "phase_start", phase="main", audit=None, index=1, total=1, cycle=None),
              event(1, "slot_start", branch="aidd/login", path="/data/wt/login", slot=1,
                    feature="login"),
              start(1, 1, 1, "login"), start(2, 2, 2, "cart"), start(3, 3, 3, "search"),
              event(40, "liveness", number=2, state="busy", since_s=38, why="tests running",
                    slot=2, feature="cart"),
              end(60, 1, 1, 1, "login"), merge(62, 1, 1, "login", "merged"),
              end(70, 2, 2, 2, "cart"), merge(72, 2, 2, "cart", "conflict"),
              end(80, 3, 3, 3, "search"), merge(85, 3, 3, "search", "merge_red"),
              start(90, 4, 1, "checkout"), start(91, 5, 2, "cart"),
              event(100, "nudge", number=4, silent_s=60, nudge=1, slot=1, feature="checkout"),
              start(101, 6, 3, "search"),
              event(110, "liveness", number=5, state="waiting", since_s=19,
                    why="waiting for the model", slot=2, feature="cart")]
    if ended:
        events += [end(200, 90, 4, 1, "checkout"), merge(201, 4, 1, "checkout", "merged"),
                   end(210, 91, 5, 2, "cart"), merge(212, 5, 2, "cart", "merged"),
                   end(220, 101, 6, 3, "search", result=1),
                   event(230, "run_end", reason="max_iterations", exit_code=0,
                         iterations=6, duration_s=230)]
    return events


def jsonl(events: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)
