"""Features an attempt finished (done in either vocabulary, `featurestate`), found by comparing
the files before and after it, and set back to not done when the gate says the work is not
(`gate-revert-passes`)."""

from __future__ import annotations

import os
from pathlib import Path

from aidd.project import featurestate
from aidd.project.features import load_features
from aidd.project.featurescan import reread, rewrite
from aidd.project.paths import ProjectPaths


def passing(paths: ProjectPaths) -> frozenset[str]:
    """The feature files (by location) that are done now."""
    return frozenset(f.location for f in load_features(paths, validate=False)
                     if featurestate.is_done(f.data))


def name(paths: ProjectPaths, location: str) -> str:
    """A feature as the console names it: its directory under features/."""
    return os.path.relpath(Path(location).parent, paths.features)


def revert(paths: ProjectPaths, locations: list[str], note: str) -> list[str]:
    """Set each file back to `passes: false`, a done status to `in_progress`, with `gateNote`,
    re-reading it first (the agent or AutoMaker may have changed it since); returns the
    locations changed. A file that is no longer done, or cannot be read as an object, is left
    alone. Every other key keeps its value and place."""
    changed = []
    for location in locations:
        try:
            data = reread(paths, location)
        except (OSError, ValueError):
            continue
        if data is None or not featurestate.is_done(data):
            continue
        data["passes"] = False
        if data.get("status") in featurestate.DONE_STATUSES:
            data["status"] = "in_progress"
        data["gateNote"] = note
        rewrite(paths, location, data)
        changed.append(location)
    return changed
