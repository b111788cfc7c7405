"""feature.json files for tests: one writer, one minimal valid feature, and a failing feature
placed in a project by its root folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aidd.project.paths import ProjectPaths


def write(paths: ProjectPaths, rel: str, data: Any) -> Path:
    """`features/<rel>/feature.json` holding `data` (a string is written as is)."""
    target = paths.features / rel / "feature.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return target


def feat(fid: str = "feature-1-a", **extra: Any) -> dict[str, Any]:
    """A feature that passes the structural check, plus `extra`."""
    return {"id": fid, "category": "Core", "description": "d", "title": None, **extra}


def feature(root: Path, fid: str = "feature-1-a", *, directory: str | None = None,
            **extra: Any) -> Path:
    """A failing backlog feature described by its id, at `features/<directory or fid>/` of the
    project at `root`; `extra` changes or adds fields (`passes=True, status="completed"`)."""
    data = feat(fid, description=fid, status="backlog", passes=False) | extra
    return write(ProjectPaths(root), directory or fid, data)
