"""opencode.json: make sure an unattended opencode never waits for a permission prompt, without
taking away any rule the user wrote (LAY-40, LAY-41)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from aidd.fsio import read_file, write_atomic
from aidd.project import jsonfile, limits

CONFIG = "opencode.json"
CONFIG_JSONC = "opencode.jsonc"
SCHEMA = "https://opencode.ai/config.json"
_MAY_BLOCK = "unattended runs may block on approvals"


def _render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _with_allow(data: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The config with a catch-all allow added where LAY-40 says, and a warning if any."""
    permission = data.get("permission")
    if "permission" not in data:
        return {**data, "permission": {"*": "allow"}}, None
    if isinstance(permission, str):
        note = None if permission == "allow" else f'{CONFIG}: permission is "{permission}"'
        return data, note and f"{note}; {_MAY_BLOCK}"
    if not isinstance(permission, dict):
        return data, f"{CONFIG}: permission is neither an object nor a string; {_MAY_BLOCK}"
    if "*" in permission:
        star = permission["*"]
        note = None if star == "allow" else f'{CONFIG}: permission "*" is {json.dumps(star)}'
        return data, note and f"{note}; {_MAY_BLOCK}"
    # opencode applies the last matching rule, so a first "*" keeps every user rule in force.
    return {**data, "permission": {"*": "allow", **permission}}, None


def _create(root: Path, path: Path) -> list[str]:
    if (root / CONFIG_JSONC).exists():
        return [f"only {CONFIG_JSONC} found; aidd leaves it alone, so {_MAY_BLOCK}"]
    try:
        write_atomic(path, _render({"$schema": SCHEMA, "permission": {"*": "allow"}}), 0o644,
                     root=root)
    except OSError as exc:
        return [f"could not write {CONFIG}: {exc}; {_MAY_BLOCK}"]
    return []


def _load(path: Path) -> tuple[dict[str, Any] | None, str]:
    try:
        data = jsonfile.loads(read_file(path.parent, path, limits.OPENCODE_CONFIG))
    except (OSError, ValueError) as exc:
        return (
            None,
            f"{CONFIG} cannot be read as JSON ({exc}); aidd leaves it alone, so {_MAY_BLOCK}",
        )
    if not isinstance(data, dict):
        return None, f"{CONFIG} is not a JSON object; aidd leaves it alone, so {_MAY_BLOCK}"
    return data, ""


def ensure_opencode_permissions(root: Path) -> list[str]:
    """Create or amend `<root>/opencode.json`; the warnings to log. Never raises."""
    path = root / CONFIG
    if not os.path.lexists(path):
        return _create(root, path)
    data, problem = _load(path)
    if data is None:
        return [problem]
    updated, warning = _with_allow(data)
    warnings = [warning] if warning else []
    if updated is data:
        return warnings  # rewritten only when something changed (LAY-41)
    if path.is_symlink():
        return [
            f"{CONFIG} is a symlink and lacks a catch-all allow; aidd does not change it, so "
            f"{_MAY_BLOCK}"
        ]
    try:
        write_atomic(path, _render(updated), stat.S_IMODE(path.stat().st_mode), root=root)
    except OSError as exc:
        return [f"could not update {CONFIG}: {exc}; {_MAY_BLOCK}"]
    return warnings
