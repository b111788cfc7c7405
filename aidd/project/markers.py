"""The two-phase completion markers (CMP-10, CMP-14): ISO-8601 times, written atomically."""

from __future__ import annotations

import contextlib
from datetime import datetime
from enum import Enum, unique
from pathlib import Path
from typing import NamedTuple

from aidd.fsio import FileTooLargeError, read_file, write_atomic
from aidd.project import limits
from aidd.project.paths import ProjectPaths


@unique
class Marker(Enum):
    PENDING = ".project_completion_pending"
    COMPLETED = ".project_completed"

    def path(self, paths: ProjectPaths) -> Path:
        return paths.completion_pending if self is Marker.PENDING else paths.completed


class MarkerState(NamedTuple):
    """The markers' contents (their times); None when a marker is absent."""

    pending_since: str | None
    completed_at: str | None


def exists(paths: ProjectPaths, marker: Marker) -> bool:
    return marker.path(paths).is_file()


def write_marker(paths: ProjectPaths, marker: Marker, now: datetime) -> None:
    write_atomic(marker.path(paths), now.isoformat(timespec="seconds") + "\n", root=paths.root)


def remove_marker(paths: ProjectPaths, marker: Marker) -> bool:
    """Delete the marker; True when there was one."""
    try:
        marker.path(paths).unlink()
    except FileNotFoundError:
        return False
    return True


def read_marker(paths: ProjectPaths, marker: Marker) -> str | None:
    """The marker's time as written, or its mtime when it holds none; None when absent."""
    path = marker.path(paths)
    try:
        text: str = read_file(paths.root, path, limits.MARKER).decode("utf-8", "replace").strip()
    except FileTooLargeError:
        text = ""  # present, but no time of ours: its mtime says when
    except OSError:
        return None
    if text:
        return text.splitlines()[0][:64]
    with contextlib.suppress(OSError):
        return datetime.fromtimestamp(path.stat().st_mtime).astimezone().isoformat("T", "seconds")
    return None


def read_markers(paths: ProjectPaths) -> MarkerState:
    return MarkerState(read_marker(paths, Marker.PENDING), read_marker(paths, Marker.COMPLETED))
