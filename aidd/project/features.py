"""feature.json files: found at any depth, each parsed on its own into typed records (FEA-10/21).

A bad file never poisons another; the whole object is kept, unknown keys included.
"""

from __future__ import annotations

import gc
import json
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from aidd.project import jsonfile
from aidd.project.featurerules import FeatureStatus, validate_feature
from aidd.project.featurescan import candidates, project_root, read_feature
from aidd.project.paths import ProjectPaths

FINDING_PREFIX = "audit-"
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


@dataclass(frozen=True, slots=True)
class FeatureFile:
    """One feature.json: where it is, what it parsed to, and what is wrong with it."""

    location: str  # the file's path as found (a str: 5,000 Path objects cost ~10 ms)
    dir_name: str
    data: Any  # parsed JSON value; None when `parse_error` is set
    parse_error: str | None
    feature: Feature | None  # None when the file fails the structural check
    waiting_approval: bool
    # The rule violations (FEA-10); only `load_features(validate=True)` fills them.
    errors: tuple[str, ...] = ()

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
    return Feature(fid, category, description, status, data.get("passes") is True, priority)


def load_features(paths: ProjectPaths, *, validate: bool = True) -> list[FeatureFile]:
    """Every `features/**/feature.json`, sorted by path; [] when `features/` is missing.

    With `validate`, each file carries its rule violations (FEA-10); dependencies resolve
    against the ids of every file that parsed.
    """
    with _gc_paused():
        root = project_root(paths)
        files = [f for p in sorted(candidates(paths)) if (f := load_file(p, root)) is not None]
        if not validate:
            return files
        known = {fid for f in files if (fid := f.feature_id) is not None}
        return [
            f if f.parse_error is not None else replace(f, errors=_errors(f, known)) for f in files
        ]


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Thousands of parsed objects only grow: collecting while they pile up finds nothing and
    costs 10-20 % of the load (measured at 5,000-20,000 features)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _errors(file: FeatureFile, known: set[str]) -> tuple[str, ...]:
    return tuple(validate_feature(file.data, file.dir_name, known))


def load_file(path: str, root: str) -> FeatureFile | None:
    """The feature file at `path`, judged alone; None when there is none (see `read_feature`)."""
    try:
        raw = read_feature(path, root)
    except OSError as exc:
        return _broken(path, f"cannot read: {exc.strerror or exc}", b"")
    return None if raw is None else parse_bytes(path, raw)


def parse_bytes(path: str, raw: bytes) -> FeatureFile:
    try:
        data = jsonfile.loads(raw)
    except json.JSONDecodeError as exc:
        msg = f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        return _broken(path, msg, raw)
    except UnicodeDecodeError as exc:
        return _broken(path, f"invalid JSON: not UTF-8 text ({exc.reason})", raw)
    except (ValueError, RecursionError) as exc:
        return _broken(path, f"invalid JSON: {exc}", raw)
    waiting = isinstance(data, dict) and data.get("status") == "waiting_approval"
    return FeatureFile(path, _dir_name(path), data, None, to_feature(data), waiting)


def _broken(path: str, message: str, raw: bytes) -> FeatureFile:
    waiting = _WAITING_RE.search(raw) is not None
    return FeatureFile(path, _dir_name(path), None, message, None, waiting)


def _dir_name(path: str) -> str:
    return path.rsplit(os.sep, 2)[-2]


def duplicate_ids(files: list[FeatureFile]) -> dict[str, list[FeatureFile]]:
    """Ids used by more than one file (`--check-features` warns about them, FEA-20)."""
    by_id: dict[str, list[FeatureFile]] = {}
    for f in files:
        fid = f.feature_id
        if fid is not None:
            by_id.setdefault(fid, []).append(f)
    return {fid: fs for fid, fs in sorted(by_id.items()) if len(fs) > 1}


def is_unfixed(file: FeatureFile) -> bool:
    """A finding whose `passes` is not true; an unparsable file is unfixed too (AUD-40)."""
    data = file.object
    return data is None or data.get("passes") is not True
