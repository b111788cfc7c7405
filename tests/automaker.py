"""AutoMaker's side of a shared `.automaker/`, for tests: which feature files its loader reads,
what its `Feature` type allows, and where its board shows a feature. Written from its loader's
conditions and its types (2026-01 snapshot, docs/automaker.md), independently of aidd's rules,
so a test can hold aidd's files against it. Also the AutoMaker-created feature set of
`tests/fixtures/automaker/` and what aidd should make of each file."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parent / "fixtures" / "automaker" / "features"

# Each fixture's directory: aidd's state (featurestate.WorkState value) and AutoMaker's column.
EXPECTED = {
    "feature-1767687300000-q8w3e7r2t": ("open", "backlog"),
    "feature-1767687360000-z1x2c3v4b": ("open", "backlog"),
    "user-authentication": ("open", "backlog"),
    "session-management": ("open", "backlog"),
    "issue-17-8c1f4e2a-6b3d-4f5e-a7c9-0d2e4b6f8a1c": ("done", "verified"),
    "3e9b7d1c-5a2f-4e8b-9c6d-1f0a2b3c4d5e": ("done", "archive"),
    "feature-1767687420000-a9s8d7f6g": ("active", "in_progress"),
    "feature-1767687480000-p0o9i8u7y": ("active", "pipeline_step_1767600000000_x4c"),
    "feature-1767687540000-m1n2b3v4c": ("review", "waiting_approval"),
    "feature-1767687600000-l5k4j3h2g": ("open", "backlog"),
}

_ENUMS = {
    "thinkingLevel": {"none", "low", "medium", "high", "ultrathink"},
    "reasoningEffort": {"none", "minimal", "low", "medium", "high", "xhigh"},
    "planningMode": {"skip", "lite", "spec", "full"},
}
_OPTIONAL = {
    "title": str, "titleGenerating": bool, "passes": bool, "status": str, "spec": str,
    "model": str, "branchName": str, "skipTests": bool, "requirePlanApproval": bool,
    "error": str, "summary": str, "startedAt": str,
}  # fmt: skip
_PLAN = {"status": str, "content": str, "version": (int, float), "generatedAt": str,
         "approvedAt": str, "reviewedByUser": bool, "tasksCompleted": (int, float),
         "tasksTotal": (int, float)}  # fmt: skip
_PLAN_REQUIRED = ("status", "version", "reviewedByUser")


def copy_fixture(features: Path) -> None:
    """The AutoMaker-created feature set, copied into a project's `features/`."""
    shutil.copytree(FIXTURE, features, dirs_exist_ok=True)


def loader_reads(features: Path) -> dict[str, dict[str, Any]]:
    """What AutoMaker's feature loader lists: each real directory directly in `features/`
    whose feature.json parses and has a truthy `id`, by directory name."""
    seen = {}
    for entry in sorted(os.scandir(features), key=lambda e: e.name):
        if not entry.is_dir(follow_symlinks=False):
            continue
        try:
            data = json.loads(Path(entry.path, "feature.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("id") not in (None, "", 0, False):
            seen[entry.name] = data
    return seen


def type_problems(data: Mapping[str, Any]) -> list[str]:
    """Where `data` breaks AutoMaker's `Feature` type. A JSON null in an optional key is
    tolerated: AutoMaker reads those keys with `||` and `?.`."""
    problems = [f"{key}: not a string" for key in ("id", "category", "description")
                if not isinstance(data.get(key), str)]  # fmt: skip
    problems += [f"{key}: not {kind.__name__}" for key, kind in _OPTIONAL.items()
                 if data.get(key) is not None and not _is(data[key], kind)]  # fmt: skip
    priority = data.get("priority")
    if priority is not None and not _is(priority, (int, float)):
        problems.append("priority: not a number")
    deps = data.get("dependencies")
    if deps is not None and not (isinstance(deps, list) and all(isinstance(d, str) for d in deps)):
        problems.append("dependencies: not a string array")
    problems += [f"{key}: {data[key]!r} not allowed" for key, allowed in _ENUMS.items()
                 if data.get(key) is not None and data[key] not in allowed]  # fmt: skip
    problems += _arrays(data)
    plan = data.get("planSpec")
    if plan is not None:
        problems += _plan(plan)
    return problems


def _is(value: Any, kind: type | tuple[type, ...]) -> bool:
    return isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))


def _arrays(data: Mapping[str, Any]) -> list[str]:
    problems = []
    images = data.get("imagePaths")
    if images is not None and not (isinstance(images, list) and all(
            isinstance(i, str) or (isinstance(i, dict) and isinstance(i.get("path"), str))
            for i in images)):
        problems.append("imagePaths: not strings or objects with a path")
    for key, fields in (("textFilePaths", ("id", "path", "filename", "mimeType", "content")),
                        ("descriptionHistory", ("description", "timestamp", "source"))):
        value = data.get(key)
        if value is not None and not (isinstance(value, list) and all(
                isinstance(v, dict) and all(isinstance(v.get(f), str) for f in fields)
                for v in value)):
            problems.append(f"{key}: entries lack {', '.join(fields)}")
    return problems


def _plan(plan: Any) -> list[str]:
    if not isinstance(plan, dict):
        return ["planSpec: not an object"]
    problems = [f"planSpec.{key}: missing" for key in _PLAN_REQUIRED if key not in plan]
    problems += [f"planSpec.{key}: wrong type" for key, kind in _PLAN.items()
                 if plan.get(key) is not None and not _is(plan[key], kind)]  # fmt: skip
    if plan.get("status") not in (None, "pending", "generating", "generated", "approved",
                                  "rejected"):  # fmt: skip
        problems.append("planSpec.status: not allowed")
    return problems


def board_column(data: Mapping[str, Any]) -> str:
    """Where AutoMaker's board puts a feature no agent is running ('archive': the completed
    list)."""
    status = data.get("status") or "backlog"
    if status == "completed":
        return "archive"
    if status in ("backlog", "in_progress", "waiting_approval", "verified"):
        return str(status)
    return str(status) if str(status).startswith("pipeline_") else "backlog"


def automaker_problems(features: Path) -> list[str]:
    """Every feature.json under `features/` that AutoMaker would not read, could not address
    by `features/<id>/`, or whose fields break its type; [] when it handles them all."""
    seen = loader_reads(features)
    problems = []
    for path in sorted(features.rglob("feature.json")):
        name = path.parent.name
        if path.parent.parent != features or name not in seen:
            problems.append(f"{path.relative_to(features)}: not read by AutoMaker")
            continue
        data = seen[name]
        if data["id"] != name:
            problems.append(f"{name}: id {data['id']!r} is not its directory name")
        problems += [f"{name}: {p}" for p in type_problems(data)]
    return problems
