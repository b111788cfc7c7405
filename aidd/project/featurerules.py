"""The feature.json rules (FEA-10) and id grammar (FEA-11): every error of one object, by field.

Shared by `--check-features` and the audit findings check (AUD-23).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from enum import Enum, unique
from typing import Any


@unique
class FeatureStatus(Enum):
    BACKLOG = "backlog"
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    VERIFIED = "verified"
    WAITING_APPROVAL = "waiting_approval"
    IN_PROGRESS = "in_progress"


# The feature id grammar (FEA-11); used with fullmatch, so no anchors and no trailing-newline
# loophole.
ID_RE = re.compile(
    r"(?:feature|spernakit|audit-[a-z]+(?:-[a-z]+)*)-[0-9]+-[a-zA-Z0-9-]+"
    r"|remediation(?:-[0-9]+)?-[a-zA-Z0-9-]+"
)

_REQUIRED_TEXT = ("id", "category", "description")
_BOOLEANS = ("passes", "titleGenerating", "skipTests", "requirePlanApproval")
_STRINGS = (
    "spec", "model", "error", "summary", "branchName", "startedAt", "createdAt", "updatedAt",
)  # fmt: skip
_ARRAYS = ("imagePaths", "textFilePaths", "descriptionHistory")
_ENUMS: dict[str, tuple[str, ...]] = {
    "status": tuple(s.value for s in FeatureStatus),
    "thinkingLevel": ("none", "low", "medium", "high", "ultrathink"),
    "reasoningEffort": ("none", "minimal", "low", "medium", "high", "xhigh"),
    "planningMode": ("skip", "lite", "spec", "full"),
}
_PLAN_NUMBERS = ("version", "tasksCompleted", "tasksTotal")
_PLAN_STATUSES = ("pending", "generating", "generated", "approved", "rejected")


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def validate_feature(data: Any, dir_name: str, known_ids: Collection[str]) -> list[str]:
    """Every FEA-10 error of one parsed feature.json, each starting with the field's name.

    `dir_name` is the directory holding the file; `known_ids` the ids of every file that parsed.
    Explicit `null` counts as absent for the optional fields.
    """
    if not isinstance(data, dict):
        return [f"not a JSON object (found {json_type(data)})"]
    errors = _required(data)
    errors += _typed(data)
    errors += _enums(data)
    errors += _dependencies(data.get("dependencies"), known_ids)
    errors += _plan_spec(data.get("planSpec"))
    errors += _finding(data, dir_name)
    return errors


def _required(data: Mapping[str, Any]) -> list[str]:
    errors = []
    for key in _REQUIRED_TEXT:
        value = data.get(key)
        if key not in data:
            errors.append(f"{key}: missing (a non-empty string is required)")
        elif not isinstance(value, str) or not value:
            errors.append(f"{key}: must be a non-empty string (found {_shown(value)})")
        elif key == "id" and ID_RE.fullmatch(value) is None:
            errors.append(f"id: {_shown(value)} does not match the id grammar (FEA-11)")
    if "title" not in data:
        errors.append("title: missing (null or a string is required)")
    elif data["title"] is not None and not isinstance(data["title"], str):
        errors.append(f"title: must be null or a string (found {json_type(data['title'])})")
    return errors


def _typed(data: Mapping[str, Any]) -> list[str]:
    errors = []
    checks = (
        (_BOOLEANS, "boolean", "a boolean"),
        (_STRINGS, "string", "a string"),
        (_ARRAYS, "array", "an array"),
        (("priority",), "number", "a number"),
    )
    for keys, kind, wanted in checks:
        for key in keys:
            value = data.get(key)
            if value is not None and json_type(value) != kind:
                errors.append(f"{key}: must be {wanted} (found {json_type(value)})")
    return errors


def _enums(data: Mapping[str, Any]) -> list[str]:
    errors = []
    for key, allowed in _ENUMS.items():
        value = data.get(key)
        if value is None or value == "":
            continue
        if value not in allowed:
            errors.append(f"{key}: {_shown(value)} is not one of {', '.join(allowed)}")
    return errors


def _dependencies(value: Any, known_ids: Collection[str]) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        return [f"dependencies: must be an array of strings (found {json_type(value)})"]
    errors = []
    for entry in value:
        if not isinstance(entry, str):
            errors.append(f"dependencies: entries must be strings (found {_shown(entry)})")
        elif entry not in known_ids:
            errors.append(f"dependencies: unknown feature id {_shown(entry)}")
    return errors


def _plan_spec(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, dict):
        return [f"planSpec: must be an object (found {json_type(value)})"]
    errors = []
    for key in _PLAN_NUMBERS:
        item = value.get(key)
        if item is not None and not _is_number(item):
            errors.append(f"planSpec.{key}: must be a number (found {json_type(item)})")
    reviewed = value.get("reviewedByUser")
    if reviewed is not None and not isinstance(reviewed, bool):
        errors.append(f"planSpec.reviewedByUser: must be a boolean (found {json_type(reviewed)})")
    status = value.get("status")
    if status is not None and status not in _PLAN_STATUSES:
        allowed = ", ".join(_PLAN_STATUSES)
        errors.append(f"planSpec.status: {_shown(status)} is not one of {allowed}")
    return errors


def _finding(data: Mapping[str, Any], dir_name: str) -> list[str]:
    source = data.get("auditSource")
    if not isinstance(source, str) or not source:
        return []
    fid = data.get("id")
    errors = []
    if not isinstance(fid, str) or not fid.startswith("audit-"):
        errors.append(f"id: a finding's id must start with 'audit-' (found {_shown(fid)})")
    if fid != dir_name:
        errors.append(f"id: a finding's id must equal its directory name {_shown(dir_name)}")
    return errors
