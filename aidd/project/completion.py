"""Completion: project state in, verdict out (CMP-1/2/10/13), and the mode-done checks (CMP-30).

Nothing is cached (CMP-14); the only writes are the two markers, atomically.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from enum import Enum, unique
from typing import NamedTuple

from aidd.project import featurestate, markers
from aidd.project.features import FeatureFile, is_unfixed, load_features
from aidd.project.featurestate import WorkState
from aidd.project.filters import FeatureFilter, counted_features
from aidd.project.markers import Marker
from aidd.project.paths import ProjectPaths
from aidd.project.todo import TodoSummary, read_todo


@unique
class FeatureVerdict(Enum):
    """How one counted feature.json weighs on completion: only DONE never blocks it (CMP-1 as
    changed by issue 18: a feature waiting for a human review is not finished work)."""

    DONE = "done"
    REVIEW = "review"  # failing: `waiting_approval`, a human has to look at it first
    WAITING = "waiting"  # failing: `failed`, a person decides whether it is tried again
    INVALID = "invalid"  # failing: not JSON, or an error AutoMaker's loader or types reject
    NOT_DONE = "not_done"  # failing: open or in progress
    INCONSISTENT = "inconsistent"  # failing: `passes: true` but a status that is not done

    @property
    def blocks(self) -> bool:
        return self is not FeatureVerdict.DONE


def judge(file: FeatureFile) -> FeatureVerdict:
    feature = file.feature
    if feature is None:
        return FeatureVerdict.INVALID
    if feature.state is WorkState.DONE:
        return FeatureVerdict.DONE
    if feature.state is WorkState.REVIEW:
        return FeatureVerdict.REVIEW
    if feature.state is WorkState.WAITING:
        return FeatureVerdict.WAITING
    if feature.passes:
        return FeatureVerdict.INCONSISTENT
    return FeatureVerdict.NOT_DONE


class FailingFeature(NamedTuple):
    name: str  # the feature's directory, relative to features/
    verdict: FeatureVerdict
    workable: bool = True  # aidd's agent may work on it (an invalid file it may repair)


class CompletionState(NamedTuple):
    features_dir: bool
    counted: int
    failing: tuple[FailingFeature, ...]
    blocking_todos: tuple[str, ...]  # the lines of .automaker/todo.md that block it (CMP-20)

    @property
    def complete(self) -> bool:
        """At least one counted feature, none failing, no blocking TODO line (CMP-2)."""
        return self.counted > 0 and not self.failing and not self.blocking_todos


def evaluate(paths: ProjectPaths, filters: FeatureFilter | None) -> CompletionState:
    if not paths.features.is_dir():
        return CompletionState(False, 0, (), _blocking(read_todo(paths.root, paths.todo)))
    files = load_features(paths, validate=False)
    counted = counted_features(files, filters)
    done_ids = frozenset(f.feature.id for f in files if f.feature is not None and f.feature.done)
    failing = tuple(
        FailingFeature(_name(paths, f), verdict, _workable(f, done_ids))
        for f in counted if (verdict := judge(f)).blocks
    )
    todo = read_todo(paths.root, paths.todo)
    return CompletionState(True, len(counted), failing, _blocking(todo))


def _workable(file: FeatureFile, done_ids: frozenset[str]) -> bool:
    """What AutoMaker's auto mode would start (issue 31 item 4): a workable status and every
    dependency done. A file with errors counts as workable: the agent may repair it."""
    feature = file.feature
    if feature is None:
        return True
    return featurestate.is_workable(feature.status) and not featurestate.blocking(
        list(feature.dependencies), done_ids)


def _name(paths: ProjectPaths, file: FeatureFile) -> str:
    prefix = str(paths.features) + os.sep
    where = file.dir_location
    return where[len(prefix) :] if where.startswith(prefix) else file.dir_name


def _blocking(todo: TodoSummary | None) -> tuple[str, ...]:
    return () if todo is None else todo.blocking_lines


@unique
class CompletionOutcome(Enum):
    CONFIRMED = "confirmed"  # pending marker replaced by .project_completed
    ALREADY_COMPLETED = "already_completed"  # .project_completed exists and still complete
    PENDING = "pending"  # first time complete: pending marker written, review iteration runs
    HELD = "held"  # complete by its features, held back by the caller (a red validation gate)
    NOT_COMPLETE = "not_complete"


class CompletionVerdict(NamedTuple):
    outcome: CompletionOutcome
    state: CompletionState
    reset: tuple[Marker, ...] = ()  # markers deleted because the project is not complete

    @property
    def confirmed(self) -> bool:
        """Exit 73 (or run the post-completion audits)."""
        return self.outcome in (CompletionOutcome.CONFIRMED, CompletionOutcome.ALREADY_COMPLETED)

    @property
    def event_state(self) -> str | None:
        """`state` of the `completion` event (LOG-42); None when there is nothing to report."""
        if self.outcome is CompletionOutcome.NOT_COMPLETE:
            return "reset" if self.reset else None
        if self.outcome is CompletionOutcome.HELD:
            return "held"
        return str(self.outcome.value)


def completion_step(
    paths: ProjectPaths, filters: FeatureFilter | None, now: datetime,
    hold: Callable[[], bool] = lambda: False,
) -> CompletionVerdict:
    """The two-phase completion check at the top of a main-phase iteration (CMP-10): no
    features/ drops the pending marker; complete confirms or starts pending; a failing feature
    drops both markers; blocking TODO lines alone keep them. `hold()`, asked only when the
    features say complete, may refuse it: then both markers go, as for a failing feature."""
    state = evaluate(paths, filters)
    if not state.features_dir:
        removed = markers.remove_marker(paths, Marker.PENDING)
        return CompletionVerdict(
            CompletionOutcome.NOT_COMPLETE, state, _if(removed, Marker.PENDING)
        )
    if state.complete and hold():
        reset = _if(markers.remove_marker(paths, Marker.PENDING), Marker.PENDING)
        reset += _if(markers.remove_marker(paths, Marker.COMPLETED), Marker.COMPLETED)
        return CompletionVerdict(CompletionOutcome.HELD, state, reset)
    if state.complete:
        return _complete(paths, state, now)
    if not state.failing:
        # Only TODO lines block: keep both markers, so resolving them confirms at once.
        return CompletionVerdict(CompletionOutcome.NOT_COMPLETE, state)
    reset = _if(markers.remove_marker(paths, Marker.PENDING), Marker.PENDING)
    reset += _if(markers.remove_marker(paths, Marker.COMPLETED), Marker.COMPLETED)
    return CompletionVerdict(CompletionOutcome.NOT_COMPLETE, state, reset)


def _complete(paths: ProjectPaths, state: CompletionState, now: datetime) -> CompletionVerdict:
    if markers.exists(paths, Marker.COMPLETED):
        return CompletionVerdict(CompletionOutcome.ALREADY_COMPLETED, state)
    if markers.exists(paths, Marker.PENDING):
        # Write before deleting: a crash in between leaves both, which still reads as completed.
        markers.write_marker(paths, Marker.COMPLETED, now)
        markers.remove_marker(paths, Marker.PENDING)
        return CompletionVerdict(CompletionOutcome.CONFIRMED, state)
    markers.write_marker(paths, Marker.PENDING, now)
    return CompletionVerdict(CompletionOutcome.PENDING, state)


def _if(removed: bool, marker: Marker) -> tuple[Marker, ...]:
    return (marker,) if removed else ()


def todo_mode_done(paths: ProjectPaths) -> bool:
    """TODO mode is done: todo.md missing, or no actionable item and no `TODO:` marker (CMP-30)."""
    todo = read_todo(paths.root, paths.todo)
    return todo is None or not todo.blocks


def in_progress_done(paths: ProjectPaths, filters: FeatureFilter | None) -> bool:
    """In-progress mode is done: no counted feature is started and not done (CMP-30):
    `in_progress` or a pipeline step (issue 31: whatever `passes` says)."""
    counted = counted_features(load_features(paths, validate=False), filters)
    return not any(_in_progress(f) for f in counted)


def _in_progress(file: FeatureFile) -> bool:
    return featurestate.state_of(file.object) is WorkState.ACTIVE


def unfixed_findings(paths: ProjectPaths) -> int:
    return sum(1 for f in load_features(paths, validate=False) if f.is_finding and is_unfixed(f))
