"""AutoMaker interoperability (issue 18): its feature files as aidd reads them, and every file
aidd and its prompts write as AutoMaker's loader and types take them (tests/automaker.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from aidd.gate.passes import revert
from aidd.project import featurestate
from aidd.project.completion import evaluate
from aidd.project.features import load_features
from aidd.project.paths import ProjectPaths
from aidd.reports.featurecheck import check_features
from aidd.reports.status import build_status
from aidd.reports.statusjson import status_json
from aidd.resources import data_dir
from tests import automaker
from tests.automaker import EXPECTED, FIXTURE, automaker_problems, copy_fixture
from tests.featurefiles import feature
from tests.unit.test_status import NOW


@pytest.fixture
def project(tmp_path: Path) -> ProjectPaths:
    paths = ProjectPaths(tmp_path / "shop")
    copy_fixture(paths.features)
    return paths


def test_the_fixture_is_what_automaker_reads() -> None:
    assert set(automaker.loader_reads(FIXTURE)) == set(EXPECTED)
    assert automaker_problems(FIXTURE) == []


def test_every_automaker_shape_is_valid_to_aidd(project: ProjectPaths) -> None:
    files = load_features(project)
    assert [f.dir_name for f in files if not f.is_valid] == []
    for file in files:
        assert file.feature is not None
        state, column = EXPECTED[file.dir_name]
        assert file.feature.state.value == state, file.dir_name
        assert featurestate.board_column(file.data.get("status")) == column
        assert automaker.board_column(file.data) == column
    text, code = check_features(project)
    assert code == 0, text
    assert "Invalid: 0" in text


def test_status_and_completion_read_automaker_states(project: ProjectPaths) -> None:
    """Item 1 (0 % before), 2, 6, 9, 12: one reading shared by --status and completion."""
    counts = status_json(build_status(project, None, NOW))["features"]
    assert {k: counts[k] for k in ("total", "done", "failing", "in_progress", "waiting_approval",
                                   "open", "closed", "verified", "blocked", "invalid")} == {
        "total": 10, "done": 2, "failing": 7, "in_progress": 2, "waiting_approval": 1,
        "open": 5, "closed": 1, "verified": 1, "blocked": 2, "invalid": 0}  # fmt: skip
    assert counts["complete_pct"] == 20
    state = evaluate(project, None)
    assert (state.counted, len(state.failing)) == (10, 8)


def test_priorities_are_shown_on_automakers_scale(project: ProjectPaths) -> None:
    rows = {r.name: r.priority for r in build_status(project, None, NOW).categories}
    assert rows["Core"] == (1, 1, 1, 0)  # high, medium, low, other


def test_the_gate_keeps_automakers_keys(project: ProjectPaths) -> None:
    """Item 14: re-read, atomic, every other key kept in place; done becomes in progress."""
    path = project.features / "issue-17-8c1f4e2a-6b3d-4f5e-a7c9-0d2e4b6f8a1c" / "feature.json"
    before = json.loads(path.read_text())
    assert revert(project, [str(path)], "gate red") == [str(path)]
    after = json.loads(path.read_text())
    assert list(after)[: len(before)] == list(before)
    changed = {k for k in before if before[k] != after[k]}
    assert changed == {"status"}  # passes was already false: AutoMaker never writes it
    assert (after["status"], after["gateNote"]) == ("in_progress", "gate red")
    assert automaker_problems(project.features) == []
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".aidd-tmp")]


def _json_blocks(template: str) -> list[dict[str, Any]]:
    """The JSON examples of a shipped prompt, template expressions replaced by a string."""
    text = (data_dir("prompts") / template).read_text()
    blocks = re.findall(r"```json\n(.*?)```", text, re.S)
    return [json.loads(re.sub(r"\{\{.*?\}\}", "x", b)) for b in blocks]


@pytest.mark.parametrize("template", ["_common/feature-format.md", "audit.md"])
def test_the_prompts_examples_are_automaker_features(tmp_path: Path, template: str) -> None:
    (example,) = _json_blocks(template)
    folder = tmp_path / "features" / example["id"]
    folder.mkdir(parents=True)
    (folder / "feature.json").write_text(json.dumps(example))
    assert automaker_problems(tmp_path / "features") == []
    assert example["priority"] in (1, 2, 3)


def test_the_prompts_name_automakers_statuses() -> None:
    text = (data_dir("prompts") / "_common" / "feature-format.md").read_text()
    for status in ("backlog", "in_progress", "waiting_approval", "verified", "completed"):
        assert f"`{status}`" in text
    coding = (data_dir("prompts") / "coding.md").read_text()
    assert '`"status": "verified"`' in coding
    assert '"status": "completed"' not in coding


def test_the_test_helpers_write_automaker_features(tmp_path: Path) -> None:
    feature(tmp_path, "feature-1-a", passes=True, status="verified")
    feature(tmp_path, "feature-2-b")
    assert automaker_problems(ProjectPaths(tmp_path).features) == []
