"""The morning report's records: built once by `build`, shown by `text`, `jsonform` and
`html`, so the three cannot disagree on a figure."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from aidd.reports.health import Health


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime
    since: str  # how the start was chosen: "last-run", "12h", or the time given


@dataclass(frozen=True)
class RunRow:
    run: str
    started_at: datetime | None
    ended_at: datetime | None
    reason: str  # run_end's reason; "running", or "no run_end" (killed or crashed)
    exit_code: int | None
    duration_s: float | None
    attempts: int  # attempts of this run inside the window


class AttemptRow(NamedTuple):
    """A night holds tens of thousands of attempts and checkpoints: a named tuple is made in
    a fifth of a frozen dataclass's time."""

    run: str
    number: int
    started_at: datetime
    ended_at: datetime
    result: int
    outcome: str
    reason: str
    kind: str | None  # the prompt kind
    tokens: int  # every kind of token added up
    cost_usd: float | None
    cost_estimated: bool
    gate_red: bool = False  # the validation gate found new failures after this attempt
    slot: int | None = None  # `--parallel N`: the slot that ran it (None: one agent's run)
    feature: str | None = None  # the feature it worked on, safe to show


@dataclass(frozen=True)
class Count:
    key: str  # a result code, or a failure reason
    label: str
    count: int


@dataclass(frozen=True)
class Usage:
    tokens: dict[str, int]  # input, output, reasoning, cache_read, cache_write
    reported_usd: float
    estimated_usd: float
    unknown_cost: int  # attempts that named no cost
    known_cost: int = 0  # attempts that named one (reported or estimated)

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens.values())

    @property
    def total_usd(self) -> float:
        return self.reported_usd + self.estimated_usd


@dataclass(frozen=True)
class Pauses:
    rate_limit_s: float
    rate_limits: int
    pace_s: float
    paces: int


@dataclass(frozen=True)
class GateRow:
    name: str
    ok: bool  # its last run passed outright
    red: bool  # its last run had new failures, which block completion
    number: int | None  # the attempt its last run checked
    new_failures: int
    known_failures: int
    new: tuple[str, ...]  # the first new failures, as the gate event names them
    red_since: int | None  # the attempt from which it has been red without a break
    turned_red: bool  # green at some point in the window, red at its end


@dataclass(frozen=True)
class Gate:
    commands: tuple[GateRow, ...]
    runs: int  # gate events in the window
    baseline_failing: int | None  # commands failing in the newest baseline, None: no baseline
    reverted: int  # features set back to failing by gate-revert-passes


class CheckpointRow(NamedTuple):
    run: str
    number: int | None
    label: str
    ref: str
    commit: str
    at: datetime
    files: int | None
    head: str | None = None  # the project's HEAD commit when it was recorded
    # `--parallel N`: the slot and feature whose worktree it is (None: the project's own)
    lane: tuple[int, str] | None = None


@dataclass(frozen=True)
class FeaturePass:
    feature: str  # its directory under features/
    title: str | None
    run: str | None
    number: int | None  # the attempt; None when it changed between attempts
    at: datetime
    checkpoint: str | None  # the checkpoint ref that first shows it passing
    commit: str | None  # the project commit the attempt made, when it made one
    subject: str | None  # that commit's subject
    passing_now: bool


@dataclass(frozen=True)
class Features:
    source: str  # "checkpoints", "mtime" (no checkpoints: the file's time), or "none"
    passed: tuple[FeaturePass, ...]
    failed_again: tuple[str, ...]  # set back from passing to failing in the window
    struggling: tuple[tuple[str, int], ...]  # (feature, attempts that changed it without a pass)
    passing_now: int
    total_now: int
    passing_at_start: int  # passing now, less what the window changed
    series: tuple[tuple[datetime, int], ...]  # features passing, after each change


@dataclass(frozen=True)
class FileChange:
    path: str
    added: int | None  # None for a binary file
    deleted: int | None


@dataclass(frozen=True)
class Diffstat:
    source: str  # "checkpoints" or "git"
    base: str  # what the window's changes are measured from and to (refs or commits)
    head: str
    files: int
    added: int
    deleted: int
    top: tuple[FileChange, ...]  # the most changed files, most first


@dataclass(frozen=True)
class SetAsideRow:
    """A feature a run set aside after attempts that ended the same way (issue 32)."""

    run: str
    feature: str  # its folder, safe to show
    attempts: tuple[int, ...]  # the attempts that ended the same way
    endings: tuple[str, ...]  # how each ended, safe to show


class MergeRow(NamedTuple):
    """`--parallel N`: the merge queue took a slot's finished feature (a `merge` event)."""

    run: str
    at: datetime
    slot: int | None
    feature: str  # safe to show
    number: int | None  # the attempt that finished it
    result: str  # merged, nothing, conflict or merge_red
    why: str | None  # the queue's words, safe to show


@dataclass(frozen=True)
class LaneRow:
    """`--parallel N`: one slot over the window."""

    slot: int
    attempts: int
    busy_s: float  # its attempts' time, added up
    features: tuple[str, ...]  # the features its attempts worked on, first seen first
    merged: int
    sent_back: int  # its merges that ended in a conflict or a red merged gate


@dataclass(frozen=True)
class Parallel:
    """The lanes and the merges of the window's `--parallel N` runs (issue 29)."""

    lanes: tuple[LaneRow, ...]
    merges: dict[str, int]  # by result, each of MERGE_RESULTS
    listed: tuple[MergeRow, ...]  # the merges, the last MAX_MERGES of them
    kept: tuple[str, ...] = ()  # a stopped run's unmerged `aidd/<id>` branches, still unmerged


@dataclass(frozen=True)
class EventsSeen:
    lines: int  # events read in the whole file
    in_window: int
    skipped: int  # lines that were not a JSON object
    error: str | None  # why events.jsonl was not read


@dataclass(frozen=True)
class MorningReport:
    project_dir: Path
    generated_at: datetime
    window: Window
    runs: tuple[RunRow, ...]
    attempts: tuple[AttemptRow, ...]
    results: tuple[Count, ...]
    failures: tuple[Count, ...]
    features: Features
    diffstat: Diffstat | None
    usage: Usage
    pauses: Pauses
    gate: Gate
    checkpoints: tuple[CheckpointRow, ...]
    health: Health  # "Look at first": the verdict on the window's runs (reports/health.py)
    events: EventsSeen
    notes: tuple[str, ...] = field(default=())
    needs_person: tuple[SetAsideRow, ...] = ()  # features set aside in the window
    # Why the project's repository keeps no checkpoints (its layout leads outside), or None.
    checkpoints_refused: str | None = None
    parallel: Parallel | None = None  # None: no `--parallel N` run in the window

    @property
    def project_name(self) -> str:
        return self.project_dir.name
