"""The events of the report's window, read so that the cost follows the window, not the file:
events.jsonl is never rotated, and a report on last night must not parse a year of nights.
A line aidd wrote older than the window is skipped on its time stamp alone, unparsed, unless
it may start or end a run (a run row needs both ends)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aidd.events import event_lines, parse_event
from aidd.reports.morning.record import EventsSeen, Window
from aidd.reports.morning.tally import when
from aidd.reports.morning.window import choose_window

# How aidd begins every line (events.EventLog): the version, then the UTC time stamp.
_PREFIX = '{"v": 1, "ts": "'
_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
_RUN_MARKS = ('"run_start"', '"run_end"')


@dataclass(frozen=True)
class WindowEvents:
    window: Window
    events: list[tuple[dict[str, Any], datetime]]  # in the window, and every run's ends
    checkpoints: list[tuple[dict[str, Any], datetime]]  # the window's `checkpoint` events
    seen: EventsSeen


def read_window(path: Path, since: str | None, now: datetime,
                root: Path | None = None) -> WindowEvents:
    """`root`: the project, which events.jsonl may not lead out of."""
    lines, error = event_lines(path, root)
    window = choose_window(since, now, _last_run_start(lines), _first_time(lines))
    key = window.start.astimezone(UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")
    events: list[tuple[dict[str, Any], datetime]] = []
    checkpoints: list[tuple[dict[str, Any], datetime]] = []
    total = skipped = in_window = 0
    for line in lines:
        if not line or line.isspace():
            continue
        total += 1
        if isinstance(line, str) and line.startswith(_PREFIX) and _older(line, key):
            continue
        event = parse_event(line)
        at = when(event.get("ts")) if event is not None else None
        if event is None or at is None:
            skipped += 1
            continue
        if at < window.start:
            events.append((event, at))
            continue
        in_window += 1
        if event.get("event") == "checkpoint":  # git wants these first; nothing else does
            checkpoints.append((event, at))
        else:
            events.append((event, at))
    return WindowEvents(window, events, checkpoints,
                        EventsSeen(total, in_window, skipped, error))


def _older(line: str, key: str) -> bool:
    """Written by aidd (the caller saw its prefix) before the window starts, and no run's
    start or end."""
    stamp = line[len(_PREFIX):len(_PREFIX) + 24]
    return (stamp < key and _STAMP.fullmatch(stamp) is not None
            and not any(mark in line for mark in _RUN_MARKS))


def _last_run_start(lines: Sequence[str | bytes]) -> datetime | None:
    for line in reversed(lines):
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        if '"run_start"' in text:
            event = parse_event(line)
            at = when(event.get("ts")) if event is not None else None
            if event is not None and event.get("event") == "run_start" and at is not None:
                return at
    return None


def _first_time(lines: Sequence[str | bytes]) -> datetime | None:
    for line in lines:
        event = parse_event(line) if line.strip() else None
        at = when(event.get("ts")) if event is not None else None
        if at is not None:
            return at
    return None
