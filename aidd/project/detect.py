"""What kind of project this is: origin (new/existing), onboarding state (LAY-15..17)."""

from __future__ import annotations

import json
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple

from aidd.fsio import read_file, write_atomic
from aidd.project import jsonfile, limits
from aidd.project.featurescan import candidates
from aidd.project.paths import ProjectPaths

IGNORED_ENTRIES = frozenset({".git", ".automaker", ".DS_Store", "node_modules", ".vscode", ".idea"})


class Origin(Enum):
    NEW = "new"
    EXISTING = "existing"


def has_existing_code(root: Path) -> bool:
    """An existing codebase: any top-level entry besides the ignored ones (LAY-15)."""
    try:
        return any(entry.name not in IGNORED_ENTRIES for entry in root.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return False


def onboarding_complete(paths: ProjectPaths) -> bool:
    """Onboarding is done: a feature set (`features/<dir>/feature.json`, whoever wrote it) and
    an app_spec.txt file (LAY-17 as changed by issue 18: AutoMaker writes no CHANGELOG.md, and
    aidd's artifacts step adds one)."""
    return paths.app_spec.is_file() and has_feature_set(paths)


def has_feature_set(paths: ProjectPaths) -> bool:
    """At least one `features/<dir>/feature.json` (content not checked)."""
    return any(Path(c).is_file() for c in candidates(paths))


class ProjectState(NamedTuple):
    """`.automaker/aidd-state.json` (LAY-16): unknown keys are kept on rewrite."""

    origin: Origin | None
    raw: dict[str, Any]


def read_state(paths: ProjectPaths) -> ProjectState:
    try:
        raw = jsonfile.loads(read_file(paths.root, paths.state, limits.STATE))
    except (OSError, ValueError):  # missing, odd (FIFO, link out), too big or invalid: ignored
        raw = {}
    if not isinstance(raw, dict):
        raw = {}
    try:
        origin = Origin(raw.get("origin"))
    except ValueError:
        origin = None
    return ProjectState(origin, raw)


def detect_origin(paths: ProjectPaths) -> Origin:
    """The recorded origin, else a fresh detection (before this run writes anything)."""
    recorded = read_state(paths).origin
    if recorded is not None:
        return recorded
    return Origin.EXISTING if has_existing_code(paths.root) else Origin.NEW


def record_origin(paths: ProjectPaths, origin: Origin, now: datetime,
                  scaffolded: list[str]) -> None:
    state = read_state(paths)
    data = dict(state.raw)
    data.update(
        origin=origin.value,
        origin_recorded_at=now.isoformat(timespec="seconds"),
        scaffolded=scaffolded,
    )
    write_atomic(paths.state, json.dumps(data, indent=2) + "\n", root=paths.root)
