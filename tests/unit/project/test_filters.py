"""Filters: typed --filter-by/--filter, --milestone, --feature (FEA-40..43, AC-68..70)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aidd.errors import ExitCode, NotFoundError, UsageError, ValidationError
from aidd.project.features import load_features
from aidd.project.filters import (
    FILTER_FIELDS,
    FeatureFilter,
    FieldKind,
    counted_features,
    load_milestone,
    parse_field_filter,
    resolve_feature,
)
from aidd.project.paths import ProjectPaths
from tests.featurefiles import feat as valid
from tests.featurefiles import write

# --- --filter-by / --filter -------------------------------------------------------------


def test_fields_are_those_of_fea_41() -> None:
    listed = [
        "id",
        "category",
        "description",
        "title",
        "status",
        "priority",
        "passes",
        "dependencies",
        "spec",
        "model",
        "error",
        "summary",
        "branchName",
        "startedAt",
        "createdAt",
        "updatedAt",
        "skipTests",
        "thinkingLevel",
        "reasoningEffort",
        "planningMode",
        "requirePlanApproval",
    ]
    assert sorted(FILTER_FIELDS) == sorted(listed)
    assert FILTER_FIELDS["skipTests"] is FieldKind.BOOLEAN
    assert FILTER_FIELDS["priority"] is FieldKind.NUMBER
    assert FILTER_FIELDS["dependencies"] is FieldKind.ARRAY
    assert FILTER_FIELDS["status"] is FieldKind.STRING


def test_no_filter() -> None:
    assert parse_field_filter(None, None) is None


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("category", None, "--filter-by and --filter"),
        (None, "UI", "--filter-by and --filter"),
        ("colour", "red", "--filter-by"),
        ("passes", "False", "--filter"),
        ("passes", "1", "--filter"),
        ("requirePlanApproval", "yes", "--filter"),
        ("priority", "high", "--filter"),
        ("priority", "1.5", "--filter"),
        ("priority", "", "--filter"),
    ],
)
def test_bad_filters_exit_2(field: str | None, value: str | None, needle: str) -> None:
    with pytest.raises(UsageError, match=needle) as info:
        parse_field_filter(field, value)
    assert info.value.exit_code is ExitCode.INVALID_ARGS


@pytest.mark.parametrize(
    ("field", "value", "data", "expected"),
    [
        # AC-70
        ("passes", "false", {"passes": False}, True),
        ("passes", "false", {}, True),
        ("passes", "false", {"passes": None}, True),
        ("passes", "false", {"passes": True}, False),  # no status: `passes` decides (issue 31)
        ("passes", "true", {"passes": True}, True),
        ("passes", "true", {"passes": True, "status": "backlog"}, False),  # issue 18
        ("passes", "true", {"passes": True, "status": "in_progress"}, False),  # issue 31
        ("passes", "true", {"status": "verified"}, True),  # AutoMaker's done
        ("passes", "false", {"passes": True, "status": "completed"}, False),
        ("passes", "true", {}, False),
        ("passes", "true", {"passes": "true"}, False),
        ("priority", "1", {"priority": 1}, True),
        ("priority", "1", {"priority": 1.0}, True),
        ("priority", "1", {"priority": "1"}, False),
        ("priority", "1", {"priority": True}, False),
        ("priority", "-2", {"priority": -2}, True),
        ("priority", "1", {}, False),
        ("dependencies", "feature-1-a", {"dependencies": ["feature-1-a", "x"]}, True),
        ("dependencies", "feature-1-a", {"dependencies": ["feature-1-ab"]}, False),
        ("dependencies", "feature-1-a", {"dependencies": "feature-1-a"}, False),
        ("dependencies", "feature-1-a", {}, False),
        ("category", "UI", {"category": "UI"}, True),
        ("category", "UI", {"category": "ui"}, False),
        ("category", "UI", {"category": None}, False),
        ("category", "UI", {}, False),
        ("title", "null", {"title": None}, False),
        ("status", "in_progress", {"status": "in_progress"}, True),
    ],
)
def test_typed_matching(field: str, value: str, data: dict[str, Any], expected: bool) -> None:
    flt = parse_field_filter(field, value)
    assert flt is not None
    assert flt.matches(data) is expected


def test_filter_applies_to_files_and_keeps_broken_ones(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    write(paths, "a", valid("feature-1-a", category="UI"))
    write(paths, "b", valid("feature-2-b", category="Core"))
    write(paths, "c", "{broken")
    flt = FeatureFilter(field=parse_field_filter("category", "UI"))
    kept = counted_features(load_features(paths, validate=False), flt)
    assert [f.dir_name for f in kept] == ["a", "c"]
    assert flt.describe() == "category=UI"
    assert flt.to_json() == {"field": "category", "value": "UI", "milestone": None,
                             "feature": None}  # fmt: skip
    assert not FeatureFilter().active
    assert counted_features(kept, None) == kept


# --- --milestone ------------------------------------------------------------------------


def roadmap(paths: ProjectPaths, data: Any) -> None:
    paths.automaker.mkdir(parents=True, exist_ok=True)
    paths.roadmap.write_text(data if isinstance(data, str) else json.dumps(data))


ROADMAP = {
    "milestones": {"M1": {"description": "first cut"}, "M2": {"description": "polish"}},
    "features": {"a": {"milestone": "M1"}, "b": {"milestone": "M2"}, "c": {"milestone": "M1"}},
}


def test_milestone_set(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    roadmap(paths, ROADMAP)
    m1 = load_milestone(paths, "M1")
    assert (m1.name, m1.description, m1.dirs) == ("M1", "first cut", frozenset({"a", "c"}))
    for d in "abd":
        write(paths, d, valid(f"feature-1-{d}"))
    kept = counted_features(load_features(paths, validate=False), FeatureFilter(milestone=m1))
    assert [f.dir_name for f in kept] == ["a"]


def test_milestone_without_features_is_empty(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    roadmap(paths, {"milestones": {"M3": {}}})
    assert load_milestone(paths, "M3").dirs == frozenset()


def test_milestone_missing_roadmap_exits_3(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match=r"roadmap\.json"):
        load_milestone(ProjectPaths(tmp_path), "M1")


@pytest.mark.parametrize(
    "data",
    [
        "{not json",
        "[]",
        {"milestones": []},
        {"milestones": {}, "features": "x"},
        {"milestones": {"M1": {}}, "features": {"a": "M1"}},
    ],
)
def test_milestone_malformed_exits_7(tmp_path: Path, data: Any) -> None:
    paths = ProjectPaths(tmp_path)
    roadmap(paths, data)
    with pytest.raises(ValidationError, match=r"roadmap\.json"):
        load_milestone(paths, "M1")


def test_unknown_milestone_exits_2_listing_them(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    roadmap(paths, ROADMAP)
    with pytest.raises(UsageError) as info:
        load_milestone(paths, "M9")
    assert "M9" in info.value.message
    assert "M1 (first cut)" in info.value.message
    assert "M2 (polish)" in info.value.message


# --- --feature ----------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> ProjectPaths:
    paths = ProjectPaths(tmp_path)
    write(paths, "login-form", valid("feature-1-login"))
    write(paths, "login-api", valid("feature-2-api"))
    write(paths, "Billing Page", valid("feature-3-billing"))
    write(paths, "feature-1-login-x", valid("feature-9-x"))
    write(paths, "nested-signup", valid("feature-4-signup"))
    return paths


def test_feature_exact_directory(project: ProjectPaths) -> None:
    focus = resolve_feature(project, "login-form")
    assert (focus.dir_name, focus.path) == ("login-form", project.features / "login-form")


def test_feature_exact_id_beats_substring(project: ProjectPaths) -> None:
    """AC-68: `feature-1-login` is an id and a substring of two directory names."""
    focus = resolve_feature(project, "feature-1-login")
    assert focus.dir_name == "login-form"


def test_feature_unique_substring_case_insensitive(project: ProjectPaths) -> None:
    assert resolve_feature(project, "billing").dir_name == "Billing Page"
    nested = resolve_feature(project, "SIGNUP")
    assert nested.path == project.features / "nested-signup"


def test_feature_ambiguous_exits_2_listing_both(project: ProjectPaths) -> None:
    with pytest.raises(UsageError) as info:
        resolve_feature(project, "login-")
    assert "features/login-api" in info.value.message
    assert "features/login-form" in info.value.message


def test_feature_none_exits_3(project: ProjectPaths) -> None:
    with pytest.raises(NotFoundError, match="nothing"):
        resolve_feature(project, "nothing")


@pytest.mark.parametrize("value", ["../x", "a/b", "..", "x\0y", ""])
def test_feature_unsafe_value_exits_2(project: ProjectPaths, value: str) -> None:
    with pytest.raises(UsageError, match="--feature"):
        resolve_feature(project, value)


def test_feature_without_features_dir_exits_3(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        resolve_feature(ProjectPaths(tmp_path), "x")


def test_feature_focus_filter(project: ProjectPaths) -> None:
    flt = FeatureFilter(focus=resolve_feature(project, "SIGNUP"))
    kept = counted_features(load_features(project, validate=False), flt)
    assert [f.dir_name for f in kept] == ["nested-signup"]
    assert flt.describe() == "feature nested-signup"
