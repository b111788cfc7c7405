"""project/schedule on values: AutoMaker's auto-mode choice (workable statuses, dependencies
done, priority, then order), the run's filters, never one feature twice, never a set-aside one,
and dependency cycles that never start."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aidd.project.features import FeatureFile, parse_bytes
from aidd.project.filters import (
    FeatureFilter,
    FeatureFocus,
    MilestoneFilter,
    parse_field_filter,
)
from aidd.project.schedule import Busy, ids, next_features, ordered
from tests.featurefiles import feat

ROOT = "/p/.automaker/features"


def file(fid: str, directory: str | None = None, **extra: Any) -> FeatureFile:
    data = feat(fid, status="backlog") | extra
    return parse_bytes(f"{ROOT}/{directory or fid}/feature.json", json.dumps(data).encode())


def pick(files: list[FeatureFile], free: int = 10, busy: Busy | None = None,
         filters: FeatureFilter | None = None) -> list[str]:
    return ids(next_features(files, free, busy, filters))


def test_only_workable_unfinished_features_are_picked() -> None:
    files = [file("a"), file("b", status="pending"), file("c", status="ready"),
             file("d", status="in_progress"), file("e", status=None),
             file("f", status="verified"), file("g", status="completed"),
             file("h", status="waiting_approval"), file("i", status="failed"),
             file("j", status="running"), file("k", status="pipeline_review"),
             file("l", status=None, passes=True), file("audit-x", category="audit")]
    assert pick(files) == ["a", "b", "c", "d", "e"]


def test_priority_first_then_the_folders_order() -> None:
    files = [file("c", priority=3), file("a"), file("b", priority=1), file("d", priority=2),
             file("e", priority=None)]
    assert pick(files) == ["b", "a", "d", "e", "c"]


def test_a_feature_waits_for_its_dependencies_to_be_done() -> None:
    files = [file("base", status="verified"), file("ui", dependencies=["api"]),
             file("api", dependencies=["base"]), file("docs", dependencies=["nowhere"])]
    assert pick(files) == ["api"]  # ui waits for api; an unknown dependency never resolves
    files[2] = file("api", status="completed")
    assert pick(files) == ["ui"]


def test_a_dependency_worked_by_a_slot_is_not_done() -> None:
    files = [file("api"), file("ui", dependencies=["api"])]
    assert pick(files, busy=Busy(taken={"api"})) == []


def test_a_released_feature_queues_behind_the_ready_ones_of_its_priority() -> None:
    """AutoMaker's ready queue is re-sorted stably after each release: a feature released by
    its dependency joins the end of its priority."""
    files = [file("a"), file("b", dependencies=["a"]), file("c"), file("z", priority=1,
                                                                    dependencies=["a"])]
    assert ids(ordered(files)) == ["a", "z", "c", "b"]


def test_a_dependency_cycle_never_starts_and_does_not_block_the_others() -> None:
    files = [file("x", dependencies=["y"]), file("y", dependencies=["x"]),
             file("self", dependencies=["self"]), file("free")]
    assert pick(files) == ["free"]


def test_never_twice_never_set_aside_and_no_more_than_free() -> None:
    files = [file("a"), file("b"), file("c"), file("d")]
    assert pick(files, free=2) == ["a", "b"]
    assert pick(files, free=2, busy=Busy(taken={"a", "b"})) == ["c", "d"]
    assert pick(files, busy=Busy(taken={"a"}, set_aside={"c"})) == ["b", "d"]
    assert pick(files, free=0) == []


def test_two_files_with_one_id_and_ids_that_cannot_be_branches_are_skipped() -> None:
    files = [file("twin", directory="twin"), file("twin", directory="twin-2"),
             file("../up", directory="up"), file("ok")]
    assert pick(files) == ["ok"]


def test_the_runs_filters_hold() -> None:
    files = [file("a", category="UI"), file("b", category="API"), file("c", category="UI")]
    by_field = FeatureFilter(field=parse_field_filter("category", "UI"))
    assert pick(files, filters=by_field) == ["a", "c"]
    milestone = FeatureFilter(milestone=MilestoneFilter("M1", "", frozenset({"b", "c"})))
    assert pick(files, filters=milestone) == ["b", "c"]
    focus = FeatureFilter(focus=FeatureFocus("b", Path(f"{ROOT}/b")))
    assert pick(files, filters=focus) == ["b"]


def test_a_filtered_out_dependency_still_counts_when_done() -> None:
    files = [file("api", category="API", status="verified"),
             file("ui", category="UI", dependencies=["api"])]
    assert pick(files, filters=FeatureFilter(field=parse_field_filter("category", "UI"))) == [
        "ui"]


def test_invalid_files_are_never_picked() -> None:
    broken = parse_bytes(f"{ROOT}/bad/feature.json", b"{not json")
    nameless = parse_bytes(f"{ROOT}/anon/feature.json", b'{"category": "c"}')
    assert pick([broken, nameless, file("ok")]) == ["ok"]
