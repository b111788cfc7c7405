"""`aidd feature set/done` (issue 31 item 7): the change is merged onto the file as it is at
write time, so a board edit made while the agent worked survives; other keys keep their value
and place; a description change is recorded in `descriptionHistory` as AutoMaker records one."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from aidd import cli
from aidd.errors import NotFoundError, UsageError, ValidationError
from aidd.project.featureedit import edit_feature, parse_assignments
from aidd.project.paths import ProjectPaths
from tests.automaker import automaker_problems, copy_fixture

NOW = datetime(2026, 1, 7, 2, 0, 0, 123000, tzinfo=UTC)
FID = "feature-1767687300000-q8w3e7r2t"


@pytest.fixture
def paths(tmp_path: Path) -> ProjectPaths:
    p = ProjectPaths(tmp_path)
    p.features.mkdir(parents=True)
    copy_fixture(p.features)
    return p


def _read(paths: ProjectPaths, fid: str = FID) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((paths.features / fid / "feature.json").read_text())
    return data


def test_a_board_edit_made_meanwhile_survives_the_agent_s_done(paths: ProjectPaths) -> None:
    agent_copy = _read(paths)  # the agent read the file when it started
    board = _read(paths) | {"description": "Free shipping over 60.", "priority": 1}
    (paths.features / FID / "feature.json").write_text(json.dumps(board, indent=2))
    edit_feature(paths, FID, {"status": "verified", "passes": True}, NOW)
    after = _read(paths)
    assert after["description"] == "Free shipping over 60."  # the board's edit is kept
    assert (after["priority"], after["status"], after["passes"]) == (1, "verified", True)
    assert after["updatedAt"] == "2026-01-07T02:00:00.123Z"
    assert list(after) == list(board) + [k for k in ("passes", "updatedAt") if k not in board]
    assert agent_copy["description"] != after["description"]
    assert automaker_problems(paths.features) == []


def test_a_description_change_is_recorded_in_the_history(paths: ProjectPaths) -> None:
    before = _read(paths)
    edit_feature(paths, FID, {"description": "Free shipping over 50 EUR."}, NOW)
    after = _read(paths)
    assert after["descriptionHistory"] == [*before["descriptionHistory"], {
        "description": "Free shipping over 50 EUR.", "timestamp": "2026-01-07T02:00:00.123Z",
        "source": "edit"}]
    edit_feature(paths, FID, {"description": "Free shipping over 50 EUR."}, NOW)  # unchanged
    assert len(_read(paths)["descriptionHistory"]) == len(after["descriptionHistory"])
    assert {k: v for k, v in after.items() if k not in ("description", "descriptionHistory",
            "updatedAt")} == {k: v for k, v in before.items() if k not in (
            "description", "descriptionHistory", "updatedAt")}  # fmt: skip


def test_values_are_json_except_for_text_keys() -> None:
    assert parse_assignments(["passes=true", "priority=2", "status=true", "notes=a=b",
                              "description=42", "tags=[\"x\"]"]) == {
        "passes": True, "priority": 2, "status": "true", "notes": "a=b", "description": "42",
        "tags": ["x"]}  # fmt: skip
    for bad in (["status"], ["=x"], ["id=other"], []):
        with pytest.raises(UsageError):
            parse_assignments(bad)


def test_a_result_automaker_would_reject_is_not_written(paths: ProjectPaths) -> None:
    raw = (paths.features / FID / "feature.json").read_bytes()
    with pytest.raises(ValidationError, match="passes: must be a boolean"):
        edit_feature(paths, FID, {"passes": "yes"}, NOW)
    with pytest.raises(NotFoundError):
        edit_feature(paths, "feature-0-missing", {"status": "verified"}, NOW)
    for fid in ("../x", "..", "a/b"):
        with pytest.raises(UsageError):
            edit_feature(paths, fid, {"status": "verified"}, NOW)
    assert (paths.features / FID / "feature.json").read_bytes() == raw


def test_the_command_line(paths: ProjectPaths, capsys: pytest.CaptureFixture[str],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIDD_PROJECT_DIR", str(paths.root))  # what aidd gives its agent
    assert cli.main(["feature", "done", FID]) == 0
    assert capsys.readouterr().out == (f'{FID}: status "backlog" -> "verified", '
                                       "passes null -> true\n")  # the board wrote no passes
    assert cli.main(["feature", "set", FID, "status=in_progress", "--project-dir",
                     str(paths.root)]) == 0
    assert _read(paths)["status"] == "in_progress"
    assert cli.main(["feature", "frob", FID]) == 2
