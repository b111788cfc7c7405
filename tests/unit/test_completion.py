"""Completion: CMP-1 table, CMP-2, the two-phase state machine (CMP-10), mode-done (CMP-30)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from aidd.project.completion import (
    CompletionOutcome,
    FeatureVerdict,
    completion_step,
    evaluate,
    in_progress_done,
    judge,
    todo_mode_done,
    unfixed_findings,
)
from aidd.project.features import load_features
from aidd.project.filters import FeatureFilter, parse_field_filter
from aidd.project.markers import Marker
from aidd.project.paths import ProjectPaths
from tests.featurefiles import feat, write

NOW = datetime(2026, 11, 21, 23, 5, 1, tzinfo=timezone(timedelta(hours=1)))
LATER = NOW + timedelta(hours=1)


def done(fid: str = "feature-1-a", **extra: Any) -> dict[str, Any]:
    return feat(fid, passes=True, status="completed", **extra)


@pytest.fixture
def paths(tmp_path: Path) -> ProjectPaths:
    p = ProjectPaths(tmp_path)
    p.features.mkdir(parents=True)
    return p


# --- CMP-1 ---------------------------------------------------------------------------------

V = FeatureVerdict


@pytest.mark.parametrize(
    ("content", "verdict"),
    [
        # issue 18: waiting for a human review is not finished work, and blocks
        (feat(status="waiting_approval"), V.REVIEW),
        (feat(status="waiting_approval", passes=True), V.REVIEW),
        ({"status": "waiting_approval"}, V.INVALID),  # malformed: no id etc.
        ('{"status": "waiting_approval", broken', V.INVALID),
        (feat(status="waiting_approval", passes="no"), V.INVALID),
        ("{not json", V.INVALID),
        ("[1, 2]", V.INVALID),
        ({"category": "c", "description": "d", "passes": True, "status": "completed"}, V.INVALID),
        (feat(category=None, passes=True, status="completed"), V.INVALID),
        ({"id": "x", "category": "c", "passes": True, "status": "completed"}, V.INVALID),
        (feat(passes=True, status=5), V.INVALID),
        (feat(), V.NOT_DONE),
        (feat(passes=False, status="in_progress"), V.NOT_DONE),
        (feat(passes=True, status="backlog"), V.INCONSISTENT),
        # issue 31: without a status, aidd's first vocabulary: `passes` decides
        (feat(passes=True), V.DONE),
        (feat(passes=True, status=""), V.DONE),
        (feat(passes=True, status="done"), V.INCONSISTENT),  # unknown: AutoMaker's backlog
        (feat(passes=True, status="pending"), V.INCONSISTENT),
        # AutoMaker's done: `verified` (its done column) and `completed` (its archive)
        (feat(status="verified"), V.DONE),
        (feat(status="completed"), V.DONE),
        (feat(status="completed", passes=False), V.DONE),  # status decides
        (feat(passes=True, status="verified"), V.DONE),
        (feat(passes=True, status="completed"), V.DONE),
        # issue 31 item 1: the status wins; AutoMaker reopens a feature keeping `passes`
        (feat(passes=True, status="in_progress"), V.INCONSISTENT),
        (feat(passes=True, status="running"), V.INCONSISTENT),  # the board's Backlog
        (feat(passes=True, status="pipeline_review"), V.INCONSISTENT),
        (feat(status="pipeline_review"), V.NOT_DONE),
        (feat(status="failed"), V.WAITING),  # issue 31 item 4: a person decides
        (feat(status="failed", passes=True), V.WAITING),
        (feat("5f0c2a9e-3b7d-4c1e-9a6f-2d8b7e4c1a03", status="verified", description=""), V.DONE),
    ],
)
def test_cmp1_table(paths: ProjectPaths, content: Any, verdict: FeatureVerdict) -> None:
    write(paths, "f", content)
    (file,) = load_features(paths, validate=False)
    assert judge(file) is verdict
    assert verdict.blocks is (verdict is not V.DONE)


# --- CMP-2 ---------------------------------------------------------------------------------


def test_no_counted_feature_is_never_complete(paths: ProjectPaths) -> None:
    assert not evaluate(paths, None).complete
    write(paths, "audit-sec-1-x", feat("audit-sec-1-x", passes=False))
    state = evaluate(paths, None)
    assert (state.counted, state.complete) == (0, False)


def test_audit_dirs_are_ignored(paths: ProjectPaths) -> None:
    write(paths, "a", done())
    write(paths, "audit-security-1-x", "{broken")
    write(paths, "audit-dead-code-2-y", feat("audit-dead-code-2-y", passes=False))
    state = evaluate(paths, None)
    assert (state.counted, state.failing, state.complete) == (1, (), True)


def test_failing_features_are_named(paths: ProjectPaths) -> None:
    write(paths, "ok", done())
    write(paths, "bad", "{")
    write(paths, "group/nested", "{")  # not read by either tool: a stray
    write(paths, "todo", feat("feature-2-b"))
    state = evaluate(paths, None)
    assert [(f.name, f.verdict) for f in state.failing] == [
        ("bad", V.INVALID),
        ("todo", V.NOT_DONE),
    ]


def test_todo_lines_block(paths: ProjectPaths) -> None:
    write(paths, "a", done())
    paths.todo.write_text("# TODO List\n- [x] a\n- [~] b\n- [!] c\n* [ ] d\n")
    assert evaluate(paths, None).complete
    paths.todo.write_text("- [x] a\n# TODO: wire\n")
    assert evaluate(paths, None).blocking_todos == ("# TODO: wire",)
    paths.todo.write_text("  -[] retry\n")
    assert evaluate(paths, None).blocking_todos == ("retry",)


def test_filters_restrict_the_counted_set(paths: ProjectPaths) -> None:
    """CMP-13."""
    write(paths, "a", done(category="UI"))
    write(paths, "b", feat("feature-2-b", category="Core"))
    ui = FeatureFilter(field=parse_field_filter("category", "UI"))
    assert evaluate(paths, ui).complete
    assert not evaluate(paths, None).complete
    none = FeatureFilter(field=parse_field_filter("category", "Nope"))
    assert not evaluate(paths, none).complete


# --- CMP-10 --------------------------------------------------------------------------------


def test_pending_then_confirmed_then_already(paths: ProjectPaths) -> None:
    """AC-59, AC-60."""
    write(paths, "a", done())
    first = completion_step(paths, None, NOW)
    assert first.outcome is CompletionOutcome.PENDING
    assert not first.confirmed
    assert first.event_state == "pending"
    assert paths.completion_pending.read_text().strip() == NOW.isoformat()
    assert not paths.completed.exists()

    second = completion_step(paths, None, LATER)
    assert second.outcome is CompletionOutcome.CONFIRMED
    assert second.confirmed
    assert second.event_state == "confirmed"
    assert not paths.completion_pending.exists()
    assert paths.completed.read_text().strip() == LATER.isoformat()

    third = completion_step(paths, None, LATER + timedelta(days=1))
    assert third.outcome is CompletionOutcome.ALREADY_COMPLETED
    assert third.confirmed
    assert third.event_state == "already_completed"
    assert paths.completed.read_text().strip() == LATER.isoformat()
    leftovers = [p.name for p in paths.automaker.iterdir() if p.name.startswith(".aidd-tmp")]
    assert leftovers == []


def test_failing_feature_deletes_both_markers(paths: ProjectPaths) -> None:
    """AC-61."""
    write(paths, "a", done())
    paths.completion_pending.write_text("x\n")
    paths.completed.write_text("y\n")
    write(paths, "b", feat("feature-2-b", passes=True, status="backlog"))
    verdict = completion_step(paths, None, NOW)
    assert verdict.outcome is CompletionOutcome.NOT_COMPLETE
    assert verdict.reset == (Marker.PENDING, Marker.COMPLETED)
    assert verdict.event_state == "reset"
    assert not paths.completion_pending.exists()
    assert not paths.completed.exists()
    again = completion_step(paths, None, NOW)
    assert (again.reset, again.event_state) == ((), None)


def test_only_todos_keep_both_markers(paths: ProjectPaths) -> None:
    """AC-61: resolving the TODO then confirms at once."""
    write(paths, "a", done())
    assert completion_step(paths, None, NOW).outcome is CompletionOutcome.PENDING
    paths.todo.write_text("- [ ] one more thing\n")
    blocked = completion_step(paths, None, NOW)
    assert blocked.outcome is CompletionOutcome.NOT_COMPLETE
    assert blocked.reset == ()
    assert blocked.state.blocking_todos == ("one more thing",)
    assert paths.completion_pending.exists()
    paths.todo.write_text("- [~] one more thing\n")
    assert completion_step(paths, None, LATER).outcome is CompletionOutcome.CONFIRMED


def test_waiting_approval_blocks_until_reviewed(paths: ProjectPaths) -> None:
    """Issue 18 item 6: AutoMaker's `waiting_approval` is work a human has not reviewed yet."""
    write(paths, "a", done())
    write(paths, "b", feat("feature-2-b", status="waiting_approval", passes=True))
    verdict = completion_step(paths, None, NOW)
    assert verdict.outcome is CompletionOutcome.NOT_COMPLETE
    assert [(f.name, f.verdict) for f in verdict.state.failing] == [("b", V.REVIEW)]
    write(paths, "b", feat("feature-2-b", status="verified", passes=True))
    assert completion_step(paths, None, NOW).outcome is CompletionOutcome.PENDING


def test_empty_features_never_complete(paths: ProjectPaths) -> None:
    paths.completion_pending.write_text("x\n")
    verdict = completion_step(paths, None, NOW)
    assert verdict.outcome is CompletionOutcome.NOT_COMPLETE
    assert paths.completion_pending.exists()  # nothing failing: kept (step 6)


def test_missing_features_dir_deletes_pending(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    paths.automaker.mkdir()
    paths.completion_pending.write_text("x\n")
    paths.completed.write_text("y\n")
    verdict = completion_step(paths, None, NOW)
    assert verdict.outcome is CompletionOutcome.NOT_COMPLETE
    assert verdict.reset == (Marker.PENDING,)
    assert not verdict.state.features_dir
    assert not paths.completion_pending.exists()
    assert paths.completed.exists()


def test_later_run_without_filter_resets(paths: ProjectPaths) -> None:
    """CMP-13: markers written under a filter go when a feature outside it fails."""
    write(paths, "a", done(category="UI"))
    write(paths, "b", feat("feature-2-b", category="Core"))
    ui = FeatureFilter(field=parse_field_filter("category", "UI"))
    completion_step(paths, ui, NOW)
    assert completion_step(paths, ui, LATER).outcome is CompletionOutcome.CONFIRMED
    assert completion_step(paths, None, LATER).reset == (Marker.COMPLETED,)


# --- CMP-30 and AUD-40 ---------------------------------------------------------------------


def test_todo_mode_done(paths: ProjectPaths) -> None:
    """AC-57."""
    assert todo_mode_done(paths)
    paths.todo.write_text("- [x] a\n- [~] b\n- [!] c\n")
    assert todo_mode_done(paths)
    paths.todo.write_text("// TODO: x\n")
    assert not todo_mode_done(paths)
    paths.todo.write_text("- [ ] x\n")
    assert not todo_mode_done(paths)


def test_in_progress_done(paths: ProjectPaths) -> None:
    """AC-58, with filters."""
    assert in_progress_done(paths, None)
    write(paths, "a", feat(status="in_progress", category="UI"))
    write(paths, "audit-x-1-y", feat("audit-x-1-y", status="in_progress"))
    assert not in_progress_done(paths, None)
    core = FeatureFilter(field=parse_field_filter("category", "Core"))
    assert in_progress_done(paths, core)


def test_unfixed_findings(paths: ProjectPaths) -> None:
    write(paths, "a", feat(passes=False))
    write(paths, "audit-sec-1-a", feat("audit-sec-1-a", passes=True, status="completed"))
    write(paths, "audit-sec-2-b", feat("audit-sec-2-b"))
    write(paths, "audit-sec-3-c", "{broken")
    write(paths, "audit-sec-4-d", feat("audit-sec-4-d", passes="true"))
    assert unfixed_findings(paths) == 3
