"""feature.json files: `features/<dir>/feature.json`, as AutoMaker keeps them, each parsed on
its own into typed records (FEA-10/21, issue 18).

A bad file never poisons another; the whole object is kept, unknown keys included.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from aidd.project import jsonfile
from aidd.project.featurerules import feature_errors, feature_warnings
from aidd.project.featurescan import candidates, read_feature
from aidd.project.featurestate import WorkState, work_state
from aidd.project.paths import ProjectPaths

FINDING_PREFIX = "audit-"


# Both records are named tuples, not frozen dataclasses: two a file, made in a fifth of the
# time (a frozen dataclass's ~1.5 us is most of its __setattr__; 5,000 files, issue 33).
class Feature(NamedTuple):
    """A feature file without errors (featurerules), and what it says about its work."""

    id: str
    category: str
    description: str
    status: str | None  # None when missing, null or empty
    passes: bool
    priority: float | None
    state: WorkState
    dependencies: tuple[str, ...]

    @property
    def done(self) -> bool:
        return self.state is WorkState.DONE


class FeatureFile(NamedTuple):
    """One feature.json: where it is, what it parsed to, and what is wrong with it."""

    location: str  # the file's path as found (a str: 5,000 Path objects cost ~10 ms)
    dir_name: str
    data: Any  # parsed JSON value; None when `parse_error` is set
    parse_error: str | None
    feature: Feature | None  # None when the file does not parse or has errors
    errors: tuple[str, ...] = ()  # what AutoMaker's loader or types reject (featurerules)
    # aidd's stricter rules; only `load_features(validate=True)` fills them.
    warnings: tuple[str, ...] = ()

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


def to_feature(data: Any) -> Feature:
    """The typed feature of an object without errors (`feature_errors` found none)."""
    status = data.get("status") or None
    priority = data.get("priority")
    if isinstance(priority, bool) or not isinstance(priority, (int, float)):
        priority = None
    passes = data.get("passes") is True
    deps = data.get("dependencies")
    return Feature(data["id"], data["category"], data["description"], status, passes, priority,
                   work_state(status, passes), tuple(deps) if isinstance(deps, list) else ())


def load_features(paths: ProjectPaths, *, validate: bool = True) -> list[FeatureFile]:
    """Every `features/**/feature.json`, sorted by path; [] when `features/` is missing.

    Every file carries its errors; with `validate`, also its warnings, where dependencies
    resolve against the ids of every file that parsed. Each file is parsed first and judged
    once all ids are known, so each record is built once (a rebuild was ~10 % at 5,000).
    """
    with gc_paused():
        root = str(paths.root)  # resolved only for a linked file (featurescan.read_feature)
        parsed = [r for p in sorted(candidates(paths)) if (r := _read(p, root)) is not None]
        known = {fid for _, data, _ in parsed if isinstance(fid := _id_of(data), str)}
        return [_judged(p, data, error, known if validate else None)
                for p, data, error in parsed]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Thousands of parsed objects only grow: collecting while they pile up finds nothing and
    costs 10-20 % of the load (measured at 5,000-20,000 features). A report over the files
    (`--check-features`) pauses it for its whole run: every collection after the load would
    walk them all again, to find nothing."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


_Parsed = tuple[str, Any, str | None]  # location, parsed value, why it does not parse


def load_file(path: str, root: str) -> FeatureFile | None:
    """The feature file at `path`, judged alone; None when there is none (see `read_feature`)."""
    parsed = _read(path, root)
    return None if parsed is None else _judged(*parsed, None)


def parse_bytes(path: str, raw: bytes) -> FeatureFile:
    return _judged(path, *_parse(raw), None)


def _read(path: str, root: str) -> _Parsed | None:
    try:
        raw = read_feature(path, root)
    except OSError as exc:
        return path, None, f"cannot read: {exc.strerror or exc}"
    return None if raw is None else (path, *_parse(raw))


def _parse(raw: bytes) -> tuple[Any, str | None]:
    try:
        return jsonfile.loads(raw), None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    except UnicodeDecodeError as exc:
        return None, f"invalid JSON: not UTF-8 text ({exc.reason})"
    except (ValueError, RecursionError) as exc:
        return None, f"invalid JSON: {exc}"


def _id_of(data: Any) -> Any:
    return data.get("id") if isinstance(data, dict) else None


def _judged(path: str, data: Any, error: str | None, known: set[str] | None) -> FeatureFile:
    """The record of a parsed file: its errors, and its warnings when `known` (the ids of
    every file that parsed) is given and it has no errors."""
    dir_name = _dir_name(path)
    if error is not None:
        return FeatureFile(path, dir_name, None, error, None)
    errors = tuple(feature_errors(data, dir_name))
    if errors:
        return FeatureFile(path, dir_name, data, None, None, errors)
    warnings = () if known is None else tuple(feature_warnings(data, dir_name, known))
    return FeatureFile(path, dir_name, data, None, to_feature(data), (), warnings)


def _dir_name(path: str) -> str:
    return path.rsplit(os.sep, 2)[-2]


def duplicate_ids(files: list[FeatureFile]) -> dict[str, list[FeatureFile]]:
    """Ids used by more than one file, sorted (`--check-features` warns about them, FEA-20).
    A list only for an id seen twice: most ids are used once (a list for each and a sort of
    every id were ~2 ms of a 5,000-feature check)."""
    first: dict[str, FeatureFile] = {}
    shared: dict[str, list[FeatureFile]] = {}
    for f in files:
        fid = f.feature_id
        if fid in first:
            shared.setdefault(fid, [first[fid]]).append(f)
        elif fid is not None:
            first[fid] = f
    return dict(sorted(shared.items()))


def is_unfixed(file: FeatureFile) -> bool:
    """A finding that is not done; a file with errors is unfixed too (AUD-40)."""
    return file.feature is None or not file.feature.done
