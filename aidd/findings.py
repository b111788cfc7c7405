"""Audit findings written during a phase: which are new, changed, invalid (AUD-23)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aidd.project.features import load_features
from aidd.project.paths import ProjectPaths
from aidd.prompts.context import InvalidFinding


def snapshot(paths: ProjectPaths, prefix: str) -> dict[str, int]:
    """mtime_ns of every `<prefix>*/feature.json`, taken when a phase starts."""
    out: dict[str, int] = {}
    if not paths.features.is_dir():
        return out
    for entry in paths.features.iterdir():
        if entry.name.startswith(prefix):
            try:
                out[entry.name] = (entry / "feature.json").stat().st_mtime_ns
            except OSError:
                continue
    return out


@dataclass(frozen=True)
class FindingsReport:
    new: int
    changed: int
    invalid: tuple[InvalidFinding, ...]


def check_findings(paths: ProjectPaths, audit_name: str, prefix: str,
                   before: dict[str, int]) -> FindingsReport:
    """Validate this audit's findings created or changed since `before` (FEA-10, id = dir,
    `auditSource` = the audit's name)."""
    now = snapshot(paths, prefix)
    touched = {d for d, mtime in now.items() if before.get(d) != mtime}
    if not touched:
        return FindingsReport(0, 0, ())
    invalid: list[InvalidFinding] = []
    for file in load_features(paths, validate=True):
        if file.dir_name not in touched or Path(file.location).parent.parent != paths.features:
            continue
        errors = list(file.messages())
        data = file.object
        if data is not None and data.get("auditSource") != audit_name:
            errors.append(f"auditSource must be {audit_name!r}")
        if data is not None and data.get("id") != file.dir_name:
            errors.append(f"id must equal the directory name {file.dir_name!r}")
        if errors:
            invalid.append(InvalidFinding(paths.rel(Path(file.location)),
                                          tuple(dict.fromkeys(errors))))
    new = sum(1 for d in touched if d not in before)
    return FindingsReport(new, len(touched) - new, tuple(invalid))
