"""The status report's records (FEA-30..35): what `--status` and status.md show, built by
`status.build_status` and rendered by `statustext` and `statusjson`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from aidd.project.filters import FeatureFilter
from aidd.project.markers import MarkerState
from aidd.project.todo import TodoSummary
from aidd.reports.running import RunState

PRIORITY_COLUMNS = ("high", "medium", "low", "other")


class FeatureCounts(NamedTuple):
    total: int = 0
    done: int = 0  # featurestate: verified or completed, or passes without a status
    failing: int = 0  # neither done nor waiting for a person (open or in progress)
    in_progress: int = 0
    waiting_approval: int = 0
    waiting_person: int = 0  # `failed`: auto mode does not retry it; a person decides
    open: int = 0
    closed: int = 0  # `completed`: AutoMaker's archive
    invalid: int = 0
    blocked: int = 0  # not done, and a dependency is not done or unknown
    verified: int = 0  # `verified`: AutoMaker's done column

    @property
    def complete_pct(self) -> int:
        return self.done * 100 // self.total if self.total else 0


class CategoryRow(NamedTuple):
    name: str
    total: int
    priority: tuple[int, int, int, int]  # in the order of PRIORITY_COLUMNS


class TodoReport(NamedTuple):
    file: str | None  # project-relative; None when no TODO file exists
    summary: TodoSummary | None
    searched: tuple[str, ...]


@dataclass(frozen=True)
class StatusReport:
    project_dir: Path
    generated_at: datetime
    filters: FeatureFilter | None
    features_dir: bool
    counts: FeatureCounts
    categories: tuple[CategoryRow, ...]
    findings_total: int
    findings_unfixed: int
    todo: TodoReport
    markers: MarkerState
    run: RunState
    notes: tuple[str, ...] = field(default=())
    # The folders of the features in progress (project/attemptfeature), filters aside: an
    # attempt's start reads them here rather than reading every feature file again.
    started: tuple[str, ...] = field(default=())

    @property
    def project_name(self) -> str:
        return self.project_dir.name
