"""`aidd --checkpoints`: this project's checkpoints, oldest first, each with its attempt's
result from events.jsonl (text or JSON)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aidd.console import json_text, print_out
from aidd.errors import ExitCode
from aidd.events import read_events
from aidd.project.checkpoints import CheckpointStore
from aidd.project.paths import ProjectPaths


def checkpoint_rows(paths: ProjectPaths, environ: Mapping[str, str]) -> list[dict[str, Any]]:
    results = _results(read_events(paths.events))
    rows = []
    for point in CheckpointStore(paths.root, "", environ).listing():
        number = int(point.label[:3]) if point.label[:3].isdigit() else None
        result, outcome = results.get((point.run, number), (None, None))
        rows.append({"number": number, "label": point.label, "time": point.created,
                     "run": point.run, "result": result, "outcome": outcome,
                     "files": point.files, "ref": point.ref, "commit": point.commit})
    return rows


def print_checkpoints(paths: ProjectPaths, environ: Mapping[str, str], *, as_json: bool) -> int:
    rows = checkpoint_rows(paths, environ)
    if as_json:
        print_out(json_text({"checkpoints": rows}))
    elif not rows:
        print_out("no checkpoints in this project\n")
    else:
        print_out("".join(_line(row) + "\n" for row in [_HEAD, *rows]))
    return int(ExitCode.SUCCESS)


_HEAD = {"label": "checkpoint", "time": "time", "run": "run", "result": "result",
         "outcome": "", "files": "files"}


def _line(row: dict[str, Any]) -> str:
    result = "" if row["result"] is None else f"{row['result']} {row['outcome'] or ''}".strip()
    files = "" if row["files"] is None else str(row["files"])
    return (f"{row['label']:<16} {row['time']:<26} {row['run']:<24} {result:<16} "
            f"{files:>5}").rstrip()


def _results(events: list[dict[str, Any]]) -> dict[tuple[str, int | None], tuple[Any, Any]]:
    """(run, log number) -> (result, outcome) of every iteration_end."""
    out: dict[tuple[str, int | None], tuple[Any, Any]] = {}
    for event in events:
        run, number = event.get("run"), event.get("number")
        if event.get("event") == "iteration_end" and isinstance(run, str) and isinstance(
                number, int):
            out[(run, number)] = (event.get("result"), event.get("outcome"))
    return out
