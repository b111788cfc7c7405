"""The project's paths (LAY-10): one record, each path made once."""

from __future__ import annotations

from pathlib import Path

from aidd.project.paths import ProjectPaths


def test_each_path_is_made_at_its_first_use_and_kept(tmp_path: Path) -> None:
    """Issue 33: a run's iteration asked for ~60 paths, each joined anew (microseconds a
    join); the record still compares and hashes by its root alone."""
    paths = ProjectPaths(tmp_path)
    assert paths.features is paths.features
    assert paths.features == tmp_path / ".automaker" / "features"
    assert paths.log(7) == tmp_path / ".automaker" / "iterations" / "007.log"
    assert paths == ProjectPaths(tmp_path)
    assert hash(paths) == hash(ProjectPaths(tmp_path))
