"""feature.json files for tests: one writer and one minimal valid feature."""

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
