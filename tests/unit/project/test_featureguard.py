"""A board edit the agent wrote over comes back after the attempt (issue 31 item 7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aidd.project.featureguard import FeatureGuard
from aidd.project.paths import ProjectPaths
from tests.automaker import automaker_problems, copy_fixture

FID = "feature-1767687300000-q8w3e7r2t"


@pytest.fixture
def paths(tmp_path: Path) -> ProjectPaths:
    p = ProjectPaths(tmp_path)
    p.features.mkdir(parents=True)
    copy_fixture(p.features)
    return p


def _file(paths: ProjectPaths, fid: str = FID) -> Path:
    return paths.features / fid / "feature.json"


def _write(guard: FeatureGuard, path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2))
    guard.noticed(str(path))  # what the watcher reports


def test_the_agent_s_stale_whole_file_write_loses_no_board_edit(paths: ProjectPaths) -> None:
    guard = FeatureGuard(paths)
    guard.begin()
    agent_copy = json.loads(_file(paths).read_text())  # read at the attempt's start
    board = agent_copy | {"description": "Free shipping over 60.", "priority": 1,
                          "descriptionHistory": [*agent_copy["descriptionHistory"], {
                              "description": "Free shipping over 60.",
                              "timestamp": "2026-01-07T01:00:00.000Z", "source": "edit"}]}
    _write(guard, _file(paths), board)
    done = agent_copy | {"status": "verified", "passes": True, "notes": "tested by hand"}
    _write(guard, _file(paths), done)
    (restored,) = guard.restore()
    assert (restored.name, restored.keys) == (FID, ("description", "descriptionHistory",
                                                    "priority"))
    after = json.loads(_file(paths).read_text())
    assert after == done | {k: board[k] for k in restored.keys}
    assert list(after) == list(done)
    assert automaker_problems(paths.features) == []
    assert guard.restore() == []  # said once


def test_the_agent_s_own_changes_and_untouched_files_stay(paths: ProjectPaths) -> None:
    guard = FeatureGuard(paths)
    guard.begin()
    start = json.loads(_file(paths).read_text())
    # the board moves it to waiting_approval, the agent writes its own status over it: the
    # agent's fields are its own to change
    _write(guard, _file(paths), start | {"status": "waiting_approval"})
    _write(guard, _file(paths), start | {"status": "verified", "passes": True,
                                         "description": "Clarified by the agent."})
    new = paths.features / "feature-9-new" / "feature.json"
    new.parent.mkdir()
    _write(guard, new, {"id": "feature-9-new", "category": "c", "description": "d"})
    guard.noticed(str(paths.automaker / "status.md"))  # not a feature file
    before = {p: p.read_bytes() for p in paths.features.glob("*/feature.json")}
    assert guard.restore() == []
    assert {p: p.read_bytes() for p in paths.features.glob("*/feature.json")} == before
