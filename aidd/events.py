"""`.automaker/events.jsonl`: one append-only JSON line per event (LOG-40..43)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1


def make_run_id(started: datetime, pid: int) -> str:
    return started.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ") + f"-{pid}"


class EventLog:
    """Each event is one `write` to a file opened O_APPEND, so lines never interleave or tear
    (except the very last one when aidd is SIGKILLed mid-write; readers skip it)."""

    def __init__(self, path: Path | None, run_id: str) -> None:
        self.path = path
        self.run_id = run_id
        self.emitted: list[dict[str, Any]] = []

    def emit(self, event: str, **fields: Any) -> dict[str, Any]:
        record: dict[str, Any] = {
            "v": SCHEMA_VERSION,
            "ts": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "run": self.run_id,
            "event": event,
            **fields,
        }
        self.emitted.append(record)
        if self.path is not None:
            line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
            try:
                os.write(fd, line.encode("utf-8", "replace"))
            finally:
                os.close(fd)
        return record


def read_events(path: Path) -> list[dict[str, Any]]:
    """Every parseable line; a torn last line from a crash is skipped (LOG-40)."""
    try:
        raw = path.read_bytes()
    except OSError:
        return []
    out: list[dict[str, Any]] = []
    for line in raw.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out
