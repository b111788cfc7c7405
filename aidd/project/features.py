"""feature.json files: found at any depth, each parsed on its own into typed records (FEA-10/21).

A bad file never poisons another; the whole object is kept, unknown keys included.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aidd.project.featurerules import ID_RE, KNOWN_KEYS, FeatureStatus, validate_feature
from aidd.project.paths import ProjectPaths

if TYPE_CHECKING:  # filters imports this module; at run time only `.matches` is called
    from aidd.project.filters import FeatureFilter

__all__ = [
    "ID_RE",
    "Feature",
    "FeatureFile",
    "FeatureStatus",
    "counted_features",
    "duplicate_ids",
    "find_feature_files",
    "is_unfixed",
    "load_features",
    "to_feature",
    "validate_feature",
]

FEATURE_FILE = "feature.json"
FINDING_PREFIX = "audit-"
_CHUNK = 1 << 16
# A file that does not parse can still say it waits for approval (CMP-1 "even if malformed").
_WAITING_RE = re.compile(rb'"status"\s*:\s*"waiting_approval"')


_STATUSES: dict[str, FeatureStatus] = {s.value: s for s in FeatureStatus}


@dataclass(frozen=True, slots=True)
class Feature:
    """A feature that passes the structural check of CMP-1: id, category, description, status."""

    id: str
    category: str
    description: str
    status: FeatureStatus | None
    passes: bool
    priority: float | None
    data: Mapping[str, Any]  # the whole JSON object, unknown keys included

    @property
    def extra(self) -> dict[str, Any]:
        """Keys outside the AutoMaker schema (e.g. `affectedFiles`), kept on rewrite."""
        return {k: v for k, v in self.data.items() if k not in KNOWN_KEYS}

    def to_json(self) -> dict[str, Any]:
        return dict(self.data)


@dataclass(frozen=True, slots=True)
class FeatureFile:
    """One feature.json: where it is, what it parsed to, and what is wrong with it."""

    location: str  # the file's path as found (a str: 5,000 Path objects cost ~10 ms)
    dir_name: str
    data: Any  # parsed JSON value; None when `parse_error` is set
    parse_error: str | None
    feature: Feature | None  # None when the file fails the structural check
    waiting_approval: bool
    errors: tuple[str, ...] = ()  # FEA-10 messages; filled by `load_features(validate=True)`

    @property
    def path(self) -> Path:
        return Path(self.location)

    @property
    def dir_location(self) -> str:
        """The directory holding the file, as a str."""
        return self.location.rpartition(os.sep)[0]

    @property
    def is_finding(self) -> bool:
        return self.dir_name.startswith(FINDING_PREFIX)

    @property
    def is_valid(self) -> bool:
        return self.parse_error is None and not self.errors

    @property
    def object(self) -> Mapping[str, Any] | None:
        return self.data if isinstance(self.data, dict) else None

    @property
    def feature_id(self) -> str | None:
        value = self.data.get("id") if isinstance(self.data, dict) else None
        return value if isinstance(value, str) else None

    def messages(self) -> tuple[str, ...]:
        return (self.parse_error,) if self.parse_error is not None else self.errors


def to_feature(data: Any) -> Feature | None:
    """The typed feature, or None when `data` fails the structural check of CMP-1."""
    if not isinstance(data, dict):
        return None
    fid, category, description = data.get("id"), data.get("category"), data.get("description")
    if not (isinstance(fid, str) and fid and isinstance(category, str) and category):
        return None
    if not (isinstance(description, str) and description):
        return None
    raw_status = data.get("status")
    status = None
    if raw_status is not None and raw_status != "":
        status = _STATUSES.get(raw_status) if isinstance(raw_status, str) else None
        if status is None:
            return None
    priority = data.get("priority")
    if isinstance(priority, bool) or not isinstance(priority, int | float):
        priority = None
    return Feature(fid, category, description, status, data.get("passes") is True, priority, data)


def load_features(paths: ProjectPaths, *, validate: bool = True) -> list[FeatureFile]:
    """Every `features/**/feature.json`, sorted by path; [] when `features/` is missing.

    With `validate`, each file carries its FEA-10 errors; dependencies resolve against the ids of
    every file that parsed.
    """
    files = [parse_file(p) for p in sorted(find_feature_files(paths))]
    if not validate:
        return files
    known = {fid for f in files if (fid := f.feature_id) is not None}
    return [f if f.parse_error is not None else replace(f, errors=_errors(f, known)) for f in files]


def _errors(file: FeatureFile, known: set[str]) -> tuple[str, ...]:
    return tuple(validate_feature(file.data, file.dir_name, known))


def parse_file(path: str) -> FeatureFile:
    dir_name = path.rsplit(os.sep, 2)[-2]
    try:
        raw = _read(path)
    except OSError as exc:
        return _broken(path, dir_name, f"cannot read: {exc.strerror or exc}", b"")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        msg = f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        return _broken(path, dir_name, msg, raw)
    except UnicodeDecodeError as exc:
        return _broken(path, dir_name, f"invalid JSON: not UTF-8 text ({exc.reason})", raw)
    except (ValueError, RecursionError) as exc:
        return _broken(path, dir_name, f"invalid JSON: {exc}", raw)
    waiting = isinstance(data, dict) and data.get("status") == "waiting_approval"
    return FeatureFile(path, dir_name, data, None, to_feature(data), waiting)


def _broken(path: str, dir_name: str, message: str, raw: bytes) -> FeatureFile:
    waiting = _WAITING_RE.search(raw) is not None
    return FeatureFile(path, dir_name, None, message, None, waiting)


def _read(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunk = os.read(fd, _CHUNK)
        if len(chunk) < _CHUNK:
            return chunk
        parts = [chunk]
        while chunk:
            chunk = os.read(fd, _CHUNK)
            parts.append(chunk)
        return b"".join(parts)
    finally:
        os.close(fd)


def find_feature_files(paths: ProjectPaths) -> list[str]:
    """Paths of every feature.json under `features/`, at any depth ([] when it is missing).

    Symlinks are followed only when they lead inside the project; a symlinked directory inside
    `features/` is not walked twice.
    """
    root = os.path.realpath(paths.root)
    top = str(paths.features)
    if not paths.features.is_dir() or not _inside(os.path.realpath(top), root):
        return []
    walker = _Walker(root, os.path.realpath(top))
    walker.walk(top)
    return walker.found


class _Walker:
    def __init__(self, root: str, features_real: str) -> None:
        self.root = root
        self.features_real = features_real
        self.found: list[str] = []
        self.seen: set[str] = set()

    def walk(self, top: str) -> None:
        stack = [top]
        while stack:
            try:
                entries = list(os.scandir(stack.pop()))
            except OSError:
                continue
            for entry in entries:
                if entry.is_symlink():
                    self._link(entry, stack)
                elif entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.name == FEATURE_FILE and entry.is_file(follow_symlinks=False):
                    self.found.append(entry.path)

    def _link(self, entry: os.DirEntry[str], stack: list[str]) -> None:
        target = os.path.realpath(entry.path)
        if not _inside(target, self.root):
            return
        if Path(target).is_dir():
            # Targets inside features/ are walked anyway; `seen` breaks cycles elsewhere.
            if not _inside(target, self.features_real) and target not in self.seen:
                self.seen.add(target)
                stack.append(entry.path)
        elif entry.name == FEATURE_FILE and Path(target).is_file():
            self.found.append(entry.path)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def duplicate_ids(files: list[FeatureFile]) -> dict[str, list[FeatureFile]]:
    """Ids used by more than one file (a warning in FEA-20)."""
    by_id: dict[str, list[FeatureFile]] = {}
    for f in files:
        fid = f.feature_id
        if fid is not None:
            by_id.setdefault(fid, []).append(f)
    return {fid: fs for fid, fs in sorted(by_id.items()) if len(fs) > 1}


def counted_features(files: list[FeatureFile], filters: FeatureFilter | None) -> list[FeatureFile]:
    """Non-findings that pass the active filters: what completion and status count (CMP-1)."""
    if filters is None or not filters.active:
        return [f for f in files if not f.is_finding]
    return [f for f in files if not f.is_finding and filters.matches(f)]


def is_unfixed(file: FeatureFile) -> bool:
    """AUD-40: a finding whose `passes` is not true; an unparsable file is unfixed."""
    data = file.object
    return data is None or data.get("passes") is not True
