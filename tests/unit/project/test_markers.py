"""Completion markers: ISO times, atomic writes (CMP-10, CMP-14)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from aidd.project.markers import (
    Marker,
    exists,
    read_marker,
    read_markers,
    remove_marker,
    write_marker,
)
from aidd.project.paths import ProjectPaths

NOW = datetime(2026, 11, 21, 23, 5, 1, tzinfo=timezone(timedelta(hours=1)))


def test_write_read_remove(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    paths.automaker.mkdir()
    assert read_markers(paths).pending_since is None
    write_marker(paths, Marker.PENDING, NOW)
    assert paths.completion_pending.read_text() == "2026-11-21T23:05:01+01:00\n"
    assert exists(paths, Marker.PENDING)
    assert not exists(paths, Marker.COMPLETED)
    assert read_markers(paths).pending_since == "2026-11-21T23:05:01+01:00"
    assert sorted(p.name for p in paths.automaker.iterdir()) == [".project_completion_pending"]
    assert remove_marker(paths, Marker.PENDING)
    assert not remove_marker(paths, Marker.PENDING)


def test_marker_paths(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    assert Marker.PENDING.path(paths) == paths.completion_pending
    assert Marker.COMPLETED.path(paths) == paths.completed
    assert Marker.COMPLETED.path(paths).name == Marker.COMPLETED.value


def test_empty_marker_reads_as_its_mtime(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    paths.automaker.mkdir()
    paths.completed.touch()
    stamp = read_marker(paths, Marker.COMPLETED)
    assert stamp is not None
    assert datetime.fromisoformat(stamp).tzinfo is not None
