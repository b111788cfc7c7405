"""Which conversation an opencode/kilo run started when its output named none (ADP-30): the
command that lists them, and the pick from its output (session/cliproc runs it).

A run hung on its first model request prints nothing, so no `sessionID` is known when the nudge
is due; the session exists already, and `<cli> session list --format json` names it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

LIST_LIMIT = 20  # sessions of other directories may share the project (all non-git dirs do)
SLACK_MS = 2000  # clock granularity between aidd's start time and the CLI's `created`


def list_argv(binary: str) -> list[str]:
    return [binary, "session", "list", "--format", "json", "--max-count", str(LIST_LIMIT)]


def pick_session(listing: bytes, project_dir: Path, since_s: float) -> str | None:
    """The newest session of `project_dir` created at or after `since_s` (Unix seconds)."""
    try:
        rows = json.loads(listing)
    except ValueError:
        return None
    want = _real(project_dir)
    found: list[tuple[float, str]] = []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        ident, created = row.get("id"), _number(row.get("created"))
        if not isinstance(ident, str) or not ident or created is None:
            continue
        if _real(Path(str(row.get("directory") or ""))) != want:
            continue
        if created + SLACK_MS >= since_s * 1000:
            found.append((created, ident))
    return max(found)[1] if found else None


def _real(path: Path) -> str:
    try:
        return str(path.resolve())
    except OSError:
        return str(path)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
