"""Features an attempt set passing, found by comparing the files before and after it, and set
back to `passes: false` when the gate says the work is not done (`gate-revert-passes`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from aidd.fsio import write_atomic
from aidd.project import jsonfile
from aidd.project.features import load_features
from aidd.project.featurescan import project_root, read_feature
from aidd.project.paths import ProjectPaths


def passing(paths: ProjectPaths) -> frozenset[str]:
    """The feature files (by location) that say `passes: true` now."""
    return frozenset(f.location for f in load_features(paths, validate=False)
                     if isinstance(f.data, dict) and f.data.get("passes") is True)


def name(paths: ProjectPaths, location: str) -> str:
    """A feature as the console names it: its directory under features/."""
    return os.path.relpath(Path(location).parent, paths.features)


def revert(paths: ProjectPaths, locations: list[str], note: str) -> list[str]:
    """Set each file back to `passes: false` with `gateNote`, re-reading it first (the agent or
    AutoMaker may have changed it since); returns the locations changed. A file that no longer
    says `passes: true`, or cannot be read as an object, is left alone."""
    root = project_root(paths)
    changed = []
    for location in locations:
        try:
            raw = read_feature(location, root)
            data = jsonfile.loads(raw) if raw is not None else None
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or data.get("passes") is not True:
            continue
        data["passes"] = False
        data["gateNote"] = note
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        write_atomic(paths.root / os.path.relpath(location, paths.root), text,
                     root=paths.root)
        changed.append(location)
    return changed
