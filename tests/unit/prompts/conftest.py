"""Shared builders for the prompt tests: a context with every variable set."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from aidd.agents.registry import ADAPTERS
from aidd.project.paths import ProjectPaths
from aidd.prompts.context import (
    CliInfo,
    FeatureFocus,
    FieldFilter,
    FilterInfo,
    IterationInfo,
    MilestoneFilter,
    PhaseInfo,
    ProjectInfo,
    PromptContext,
    PromptPaths,
    TimeInfo,
)
from aidd.prompts.select import PromptKind

CLIS = ("opencode", "kilocode", "claude-code")
NOW = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
ALL_FILTERS = FilterInfo(
    milestone=MilestoneFilter("mvp", "First usable cut", ("feature-1-login", "feature-2-cart")),
    feature=FeatureFocus("feature-2-cart", "cart"),
    field=FieldFilter("category", "UI"),
)


def make_context(
    paths: ProjectPaths, kind: PromptKind, cli: str = "claude-code", **changes: Any
) -> PromptContext:
    values: dict[str, Any] = {
        "aidd_version": "9.9.9",
        "project": ProjectInfo(str(paths.root), paths.root.name),
        "cli": CliInfo(cli, ADAPTERS[cli].display_name),
        "kind": kind,
        "paths": PromptPaths.from_project(paths),
        "now": TimeInfo.from_datetime(NOW),
        "iteration": IterationInfo(number=7, index=2, max=10),
        "phase": PhaseInfo("main", 0),
    }
    values.update(changes)
    return PromptContext(**values)


@pytest.fixture
def project(tmp_path: Path) -> ProjectPaths:
    root = tmp_path / "shop"
    root.mkdir()
    return ProjectPaths(root)
