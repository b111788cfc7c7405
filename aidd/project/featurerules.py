"""The feature.json rules: errors where AutoMaker's loader or types reject a file, warnings where
only aidd's stricter habits object (FEA-10 as changed by issue 18, docs/automaker.md).

One rule set for `--status`, completion, `--check-features` and the audit findings check.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from aidd.project import featurestate

_REQUIRED_TEXT = ("category", "description")  # strings in AutoMaker's type; empty allowed
_BOOLEANS = ("passes", "titleGenerating", "skipTests", "requirePlanApproval")
_STRINGS = (
    "title", "status", "spec", "model", "error", "summary", "branchName", "startedAt",
    "createdAt", "updatedAt",
)  # fmt: skip
STRING_KEYS = _STRINGS  # featureedit keeps these text whatever they look like
_ARRAYS = ("imagePaths", "textFilePaths", "descriptionHistory")
_ENUMS: dict[str, tuple[str, ...]] = {
    "thinkingLevel": ("none", "low", "medium", "high", "ultrathink"),
    "reasoningEffort": ("none", "minimal", "low", "medium", "high", "xhigh"),
    "planningMode": ("skip", "lite", "spec", "full"),
}
_PLAN_NUMBERS = ("version", "tasksCompleted", "tasksTotal")
_PLAN_STATUSES = ("pending", "generating", "generated", "approved", "rejected")
# AutoMaker's board shows 1 High, 2 Medium and anything else as Low.
PRIORITY_NAMES = {1: "high", 2: "medium", 3: "low"}
_KINDS: dict[str, tuple[str, str]] = {  # key: (its JSON type, how a message names it)
    **dict.fromkeys(_BOOLEANS, ("boolean", "a boolean")),
    **dict.fromkeys(_STRINGS, ("string", "a string")),
    **dict.fromkeys(_ARRAYS, ("array", "an array")),
    "priority": ("number", "a number"),
}
_KIND_ORDER = {key: index for index, key in enumerate(_KINDS)}
_TYPES_OF: dict[str, tuple[type, ...]] = {
    "boolean": (bool,), "string": (str,), "array": (list,), "number": (int, float)}
# The exact types json.loads makes that fit each key (null always fits): a quick first check.
_FITS = {key: frozenset({type(None), *_TYPES_OF[kind]}) for key, (kind, _) in _KINDS.items()}
_JSON_TYPES: dict[type, str] = {
    type(None): "null", bool: "boolean", int: "number", float: "number", str: "string",
    list: "array", dict: "object"}
_UNSAFE_ID_CHARS = frozenset("/\\\0")
_NUMBER = (int, float)  # a tuple: `isinstance(v, int | float)` builds the union at each call


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages."""
    exact = _JSON_TYPES.get(type(value))  # what json.loads makes; subclasses below
    if exact is not None:
        return exact
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, _NUMBER):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _shown(value: Any) -> str:
    """`value` as JSON in a message, cut at 60 characters. An int or a printable string
    without quotes or backslashes is written directly: json.dumps gives the same text,
    slower (~3 us each, a tenth of a check where many files draw a warning)."""
    kind = type(value)
    if kind is int:
        text = str(value)
    elif kind is str and value.isprintable() and '"' not in value and "\\" not in value:
        text = f'"{value}"'
    else:
        text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_number(value: Any) -> bool:
    return isinstance(value, _NUMBER) and not isinstance(value, bool)


def feature_errors(data: Any, dir_name: str) -> list[str]:
    """Every error of one parsed feature.json, each starting with the field's name: what
    AutoMaker's loader skips (no id) or its `Feature` type forbids, plus aidd's finding rule.
    Explicit `null` counts as absent for the optional fields."""
    if not isinstance(data, dict):
        return [f"not a JSON object (found {json_type(data)})"]
    errors = _required(data)
    errors += _typed(data)
    errors += _enums(data)
    errors += _dependency_types(data.get("dependencies"))
    errors += _plan_spec(data.get("planSpec"))
    errors += _finding(data, dir_name)
    return errors


def _required(data: Mapping[str, Any]) -> list[str]:
    errors = []
    fid = data.get("id")
    if "id" not in data:
        errors.append("id: missing (a non-empty string is required)")
    elif not isinstance(fid, str) or not fid:
        errors.append(f"id: must be a non-empty string (found {_shown(fid)})")
    for key in _REQUIRED_TEXT:
        if key not in data:
            errors.append(f"{key}: missing (a string is required)")
        elif not isinstance(data[key], str):
            errors.append(f"{key}: must be a string (found {json_type(data[key])})")
    return errors


def _typed(data: Mapping[str, Any]) -> list[str]:
    """The errors in the order of `_KINDS`. Most files hold a few of the typed keys, each of
    an exact type that fits: only a file with a misfit pays for the full pass."""
    for key, value in data.items():
        fits = _FITS.get(key)
        if fits is not None and type(value) not in fits:
            return _misfits(data)
    return []


def _misfits(data: Mapping[str, Any]) -> list[str]:
    wrong = [key for key, value in data.items()
             if key in _FITS and type(value) not in _FITS[key]
             and value is not None and json_type(value) != _KINDS[key][0]]
    wrong.sort(key=_KIND_ORDER.__getitem__)
    return [f"{key}: must be {_KINDS[key][1]} (found {json_type(data[key])})" for key in wrong]


def _enums(data: Mapping[str, Any]) -> list[str]:
    errors = []
    for key, allowed in _ENUMS.items():
        value = data.get(key)
        if value is None or value == "":
            continue
        if value not in allowed:
            errors.append(f"{key}: {_shown(value)} is not one of {', '.join(allowed)}")
    return errors


def _dependency_types(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        return [f"dependencies: must be an array of strings (found {json_type(value)})"]
    return [f"dependencies: entries must be strings (found {_shown(entry)})"
            for entry in value if not isinstance(entry, str)]  # fmt: skip


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
    """aidd's own audit findings (AUD-23) are addressed by directory: their rule stays an
    error."""
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


def feature_warnings(data: Mapping[str, Any], dir_name: str,
                     known_ids: Collection[str]) -> list[str]:
    """aidd's stricter rules for a file AutoMaker accepts (only for a file without errors):
    what the file means differently to the two tools, or what makes it hard to work on."""
    warnings = _id_warnings(data.get("id"), dir_name)
    for key in _REQUIRED_TEXT:
        if data.get(key) == "":
            warnings.append(f"{key}: empty (an agent needs it to work on the feature)")
    warnings += _status_warnings(data)
    warnings += _priority_warnings(data.get("priority"))
    deps = data.get("dependencies")
    for entry in deps if isinstance(deps, list) else ():
        if entry not in known_ids:
            warnings.append(f"dependencies: unknown feature id {_shown(entry)} (the feature "
                            "stays blocked: neither tool starts it)")
    return warnings


def _id_warnings(fid: Any, dir_name: str) -> list[str]:
    if not isinstance(fid, str):
        return []
    if fid in (".", "..") or not _UNSAFE_ID_CHARS.isdisjoint(fid):
        return [f"id: {_shown(fid)} is not a folder name (AutoMaker keeps a feature in "
                "features/<id>/)"]
    if fid != dir_name:
        return [f"id: differs from its directory name {_shown(dir_name)} (AutoMaker "
                "addresses a feature by features/<id>/ and cannot update this one)"]
    return []


def _status_warnings(data: Mapping[str, Any]) -> list[str]:
    status = data.get("status")
    warnings = []
    if isinstance(status, str) and status and not featurestate.is_known_status(status):
        warnings.append(f"status: {_shown(status)} means nothing to either tool (AutoMaker "
                        "shows it in the backlog, aidd counts it open)")
    if data.get("passes") is not True:  # both rules below are about `passes: true`
        return warnings
    if featurestate.inconsistent(data):
        warnings.append(f"passes: true, but status {_shown(status)} says not started (use "
                        f'"{featurestate.FINISHED_STATUS}"; both tools count it not done)')
    if featurestate.ambiguous_pass(data):
        warnings.append(f"passes: true, but status {_shown(status)} says in progress: reopened "
                        "on the board (set passes false) or finished by an earlier aidd "
                        f'(status "{featurestate.FINISHED_STATUS}", or aidd --migrate-features);'
                        " both tools count it in progress")
    return warnings


def _priority_warnings(priority: Any) -> list[str]:
    if not _is_number(priority) or priority in PRIORITY_NAMES:
        return []
    return [f"priority: {_shown(priority)} is outside 1-3 (AutoMaker shows 1 High, 2 Medium, "
            "3 Low; it shows this one as Low)" if priority else
            f"priority: {_shown(priority)} is outside 1-3 (AutoMaker shows no priority)"]
