"""`aidd feature set ID KEY=VALUE…` and `aidd feature done ID` (issue 31 item 7): a change merged
onto the file as it is at write time, as AutoMaker's own update does (feature-loader.ts
319-360), so an edit made on the board while the agent worked is not lost to a whole-file
write. Every other key keeps its value and place; the file is replaced atomically."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aidd.errors import NotFoundError, UsageError, ValidationError, shown
from aidd.project import featurerules, featurestate, jsonfile
from aidd.project.featurescan import FEATURE_FILE, project_root, read_feature, rewrite
from aidd.project.paths import ProjectPaths

USAGE = ("usage: aidd feature set ID KEY=VALUE... [--project-dir DIR]\n"
         "       aidd feature done ID [--project-dir DIR]\n"
         "The project: --project-dir, else $AIDD_PROJECT_DIR, else the working directory.\n"
         "Change one feature.json, merged onto the file as it is now: every other key keeps "
         "its value and place.\nA VALUE that is JSON (true, 2, [\"a\"]) is taken as such, "
         "except for text keys (description, status, ...); anything else is a string.\n")
# Keys AutoMaker types as strings: `status=true` or `description=42` stay text.
_TEXT_KEYS = frozenset({"id", "category", "description", *featurerules.STRING_KEYS})


@dataclass(frozen=True)
class Edit:
    name: str  # the feature's directory
    changed: tuple[tuple[str, Any, Any], ...]  # (key, old value or None, new value)


def parse_value(key: str, text: str) -> Any:
    if key in _TEXT_KEYS:
        return text
    try:
        return jsonfile.loads(text)
    except ValueError:
        return text


def parse_assignments(pairs: Sequence[str]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"aidd feature set: {shown(pair)} is not KEY=VALUE")
        if key in ("id", "descriptionHistory"):
            raise UsageError(f"aidd feature set: {key} is not changed this way")
        changes[key] = parse_value(key, text)
    if not changes:
        raise UsageError("aidd feature set: nothing to set (give KEY=VALUE)")
    return changes


def edit_feature(paths: ProjectPaths, fid: str, changes: dict[str, Any], now: datetime) -> Edit:
    """Re-read `features/<fid>/feature.json`, merge `changes` onto it (with `updatedAt`, and a
    `descriptionHistory` entry when the description changes, as AutoMaker records one), refuse
    a result AutoMaker would reject, and write it atomically."""
    if not fid or fid in (".", "..") or any(c in fid for c in "/\\\0"):
        raise UsageError(f"aidd feature: {shown(fid)} is not a feature id")
    location = str(paths.features / fid / FEATURE_FILE)
    try:
        raw = read_feature(location, project_root(paths))
        data = jsonfile.loads(raw) if raw is not None else None
    except (OSError, ValueError) as exc:
        raise ValidationError(f"aidd feature: {paths.rel(Path(location))}: {exc}") from None
    if raw is None:
        raise NotFoundError(f"aidd feature: no feature {shown(fid)} "
                            f"({paths.rel(Path(location))} does not exist)")
    if not isinstance(data, dict):
        raise ValidationError(f"aidd feature: {paths.rel(Path(location))} is not a JSON object")
    stamp = now.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    merged = dict(data)
    new_text = changes.get("description")
    if isinstance(new_text, str) and new_text != data.get("description"):
        history = data.get("descriptionHistory")
        entries = list(history) if isinstance(history, list) else []
        merged["descriptionHistory"] = [*entries, {"description": new_text, "timestamp": stamp,
                                                   "source": "edit"}]
    merged.update(changes)
    if "updatedAt" not in changes:
        merged["updatedAt"] = stamp
    errors = featurerules.feature_errors(merged, fid)
    if errors:
        raise ValidationError(f"aidd feature: refused, AutoMaker would reject the result: "
                              f"{'; '.join(errors)}")
    rewrite(paths, location, merged)
    changed = tuple((k, data.get(k), v) for k, v in changes.items() if data.get(k) != v)
    return Edit(fid, changed)


def done_changes() -> dict[str, Any]:
    """What aidd's agent writes when it has verified a feature: AutoMaker's done column."""
    return {"status": featurestate.FINISHED_STATUS, "passes": True}


def describe(edit: Edit) -> str:
    if not edit.changed:
        return f"{edit.name}: unchanged\n"
    parts = [f"{key} {_short(old)} -> {_short(new)}" for key, old, new in edit.changed]
    return f"{edit.name}: {', '.join(parts)}\n"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."
