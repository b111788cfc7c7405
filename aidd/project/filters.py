"""Feature filters (FEA-40..43): typed `--filter-by/--filter`, `--milestone`, `--feature` focus."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum, unique
from pathlib import Path
from typing import Any

from aidd.errors import NotFoundError, UsageError, ValidationError, shown
from aidd.fsio import read_file
from aidd.project import featurestate, jsonfile, limits
from aidd.project.features import FeatureFile, load_features
from aidd.project.paths import ProjectPaths


@unique
class FieldKind(Enum):
    BOOLEAN = "boolean"
    NUMBER = "number"
    ARRAY = "array"
    STRING = "string"


_KIND_OF = {"passes": FieldKind.BOOLEAN, "skipTests": FieldKind.BOOLEAN,
            "requirePlanApproval": FieldKind.BOOLEAN, "priority": FieldKind.NUMBER,
            "dependencies": FieldKind.ARRAY}  # fmt: skip
_STRING_FIELDS = (
    "id", "category", "description", "title", "status", "spec", "model", "error", "summary",
    "branchName", "startedAt", "createdAt", "updatedAt", "thinkingLevel", "reasoningEffort",
    "planningMode",
)  # fmt: skip
FILTER_FIELDS: dict[str, FieldKind] = {
    **dict.fromkeys(_STRING_FIELDS, FieldKind.STRING),
    **_KIND_OF,
}
_INT_RE = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class FieldFilter:
    """`--filter-by FIELD --filter VALUE`, VALUE already converted to the field's type."""

    field: str
    kind: FieldKind
    value: bool | int | str
    text: str  # VALUE as the user typed it

    def matches(self, data: Mapping[str, Any]) -> bool:
        if self.field == "passes":  # done in either vocabulary (issue 18), not the raw key
            return featurestate.is_done(data) is self.value
        actual = data.get(self.field)
        match self.kind:
            case FieldKind.BOOLEAN:
                return (actual is True) is self.value
            case FieldKind.NUMBER:
                number = isinstance(actual, int | float) and not isinstance(actual, bool)
                return number and actual == self.value
            case FieldKind.ARRAY:
                return isinstance(actual, list) and self.value in actual
            case FieldKind.STRING:
                return isinstance(actual, str) and actual == self.value


@dataclass(frozen=True)
class MilestoneFilter:
    name: str
    description: str
    dirs: frozenset[str]  # feature directory names in the milestone


@dataclass(frozen=True)
class FeatureFocus:
    """`--feature`: the one feature directory the run focuses on."""

    dir_name: str
    path: Path  # the directory holding feature.json


@dataclass(frozen=True)
class FeatureFilter:
    """Every active filter; a feature must pass all of them (FEA-40)."""

    field: FieldFilter | None = None
    milestone: MilestoneFilter | None = None
    focus: FeatureFocus | None = None

    @property
    def active(self) -> bool:
        return not (self.field is None and self.milestone is None and self.focus is None)

    def matches(self, file: FeatureFile) -> bool:
        if self.milestone is not None and file.dir_name not in self.milestone.dirs:
            return False
        if self.focus is not None and file.dir_location != str(self.focus.path):
            return False
        # A file that is not a JSON object cannot be excluded by its fields: it stays counted
        # (as invalid / failing) rather than hidden.
        data = file.object
        return self.field is None or data is None or self.field.matches(data)

    def describe(self) -> str:
        """`category=UI, milestone M1, feature login` for titles and logs ('' when none)."""
        parts = []
        if self.field is not None:
            parts.append(f"{self.field.field}={self.field.text}")
        if self.milestone is not None:
            parts.append(f"milestone {self.milestone.name}")
        if self.focus is not None:
            parts.append(f"feature {self.focus.dir_name}")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The `filters` object of `--status --json` (FEA-35)."""
        return {
            "field": self.field.field if self.field else None,
            "value": self.field.text if self.field else None,
            "milestone": self.milestone.name if self.milestone else None,
            "feature": self.focus.dir_name if self.focus else None,
        }


def counted_features(files: list[FeatureFile], filters: FeatureFilter | None) -> list[FeatureFile]:
    """What completion and status count: the features, not the audit findings, that pass the
    active filters (CMP-1)."""
    if filters is None or not filters.active:
        return [f for f in files if not f.is_finding]
    return [f for f in files if not f.is_finding and filters.matches(f)]


def parse_field_filter(field: str | None, value: str | None) -> FieldFilter | None:
    """Check and type `--filter-by/--filter` (FEA-41); None when neither is given."""
    if field is None and value is None:
        return None
    if field is None or value is None:
        raise UsageError("--filter-by and --filter must be used together")
    kind = FILTER_FIELDS.get(field)
    if kind is None:
        raise UsageError(
            f"--filter-by: unknown field {field!r}; use one of {', '.join(FILTER_FIELDS)}"
        )
    return FieldFilter(field, kind, _typed_value(field, kind, value), value)


def _typed_value(field: str, kind: FieldKind, value: str) -> bool | int | str:
    if kind is FieldKind.BOOLEAN:
        if value not in ("true", "false"):
            raise UsageError(f"--filter: {field} is a boolean; use true or false, not {value!r}")
        return value == "true"
    if kind is FieldKind.NUMBER:
        if _INT_RE.fullmatch(value.strip()) is None:
            raise UsageError(f"--filter: {field} is a number; use an integer, not {value!r}")
        return int(value)
    return value


def load_milestone(paths: ProjectPaths, name: str) -> MilestoneFilter:
    """`--milestone NAME` from `roadmap.json` (FEA-42): missing 3, malformed 7, unknown 2."""
    where = paths.rel(paths.roadmap)
    milestones, features = _read_roadmap(paths.roadmap, where)
    if name not in milestones:
        listed = "; ".join(f"{m} ({d})" if d else m for m, d in milestones.items())
        raise UsageError(
            f"--milestone: unknown milestone {name!r} in {where}; available: {listed or '(none)'}"
        )
    dirs = frozenset(d for d, m in features.items() if m == name)
    return MilestoneFilter(name, milestones[name], dirs)


def _read_roadmap(path: Path, where: str) -> tuple[dict[str, str], dict[str, str | None]]:
    try:
        raw = read_file(path.parents[1], path, limits.ROADMAP)  # <root>/.automaker/roadmap.json
    except FileNotFoundError:
        raise NotFoundError(f"--milestone needs {where}, which does not exist") from None
    except OSError as exc:
        raise NotFoundError(f"cannot read {where}: {exc.strerror or exc}") from None
    try:
        data = jsonfile.loads(raw)
    except ValueError as exc:
        raise ValidationError(f"{where} is not valid JSON: {shown(str(exc))}") from None
    if not isinstance(data, dict):
        raise ValidationError(f"{where} must hold a JSON object")
    milestones = _object(data, "milestones", where)
    features = _object(data, "features", where)
    described = {m: _description(v) for m, v in milestones.items()}
    members: dict[str, str | None] = {}
    for dir_name, entry in features.items():
        if not isinstance(entry, dict):
            raise ValidationError(f"{where}: features.{dir_name} must be an object")
        member = entry.get("milestone")
        members[dir_name] = member if isinstance(member, str) else None
    return described, members


def _object(data: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ValidationError(f"{where}: {key} must be an object")
    return value


def _description(entry: Any) -> str:
    text = entry.get("description") if isinstance(entry, dict) else None
    return text if isinstance(text, str) else ""


def resolve_feature(paths: ProjectPaths, value: str) -> FeatureFocus:
    """`--feature VALUE` (FEA-43): directory, else exact id, else unique substring of a
    directory name; ambiguous 2 (listing them), none 3, unsafe VALUE 2."""
    if not value or "/" in value or ".." in value or "\0" in value:
        raise UsageError(f"--feature: {value!r} must be one path component (no '/', '..', NUL)")
    if not paths.features.is_dir():
        raise NotFoundError(f"--feature {value}: {paths.rel(paths.features)} does not exist")
    files = load_features(paths, validate=False)
    direct = paths.features / value
    if any(f.dir_location == str(direct) for f in files):
        return FeatureFocus(value, direct)
    by_id = _unique_dirs(paths, value, [f for f in files if f.feature_id == value], "id")
    if by_id is not None:
        return by_id
    needle = value.casefold()
    matches = [f for f in files if needle in f.dir_name.casefold()]
    found = _unique_dirs(paths, value, matches, "directory name")
    if found is None:
        raise NotFoundError(f"--feature {value}: no feature directory or id matches")
    return found


def _unique_dirs(
    paths: ProjectPaths, value: str, matches: list[FeatureFile], what: str
) -> FeatureFocus | None:
    dirs = sorted({f.path.parent for f in matches})
    if not dirs:
        return None
    if len(dirs) > 1:
        listed = ", ".join(paths.rel(d) for d in dirs)
        raise UsageError(f"--feature {value}: ambiguous {what}, matches {listed}")
    return FeatureFocus(dirs[0].name, dirs[0])
