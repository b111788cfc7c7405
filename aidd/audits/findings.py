"""Audit findings written during a phase: which are new, changed, invalid (AUD-23)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from aidd.audits.definitions import available
from aidd.audits.names import kebab
from aidd.project.features import FeatureFile, load_features
from aidd.project.paths import ProjectPaths
from aidd.prompts.context import InvalidFinding


def snapshot(paths: ProjectPaths, prefix: str) -> dict[str, int]:
    """mtime_ns of every `<prefix>*/feature.json`, taken when a phase starts.

    Directories of a longer audit's findings are not this audit's (`audit-security-headers-…`
    belongs to SECURITY_HEADERS, not SECURITY), as for reports (AUD-22)."""
    out: dict[str, int] = {}
    if not paths.features.is_dir():
        return out
    longer = _longer_prefixes(paths, prefix)
    for entry in paths.features.iterdir():
        if entry.name.startswith(prefix) and not entry.name.startswith(longer):
            try:
                out[entry.name] = (entry / "feature.json").stat().st_mtime_ns
            except OSError:
                continue
    return out


def _longer_prefixes(paths: ProjectPaths, prefix: str) -> tuple[str, ...]:
    known = (f"audit-{kebab(name)}-" for name in available(paths))
    return tuple(p for p in known if p.startswith(prefix) and p != prefix)


class FindingsReport(NamedTuple):
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
        errors = finding_errors(file, audit_name)
        if errors:
            invalid.append(InvalidFinding(paths.rel(Path(file.location)), errors))
    new = sum(1 for d in touched if d not in before)
    return FindingsReport(new, len(touched) - new, tuple(invalid))


def finding_errors(file: FeatureFile, audit_name: str) -> tuple[str, ...]:
    """The feature.json rule violations (FEA-10) plus the two rules of a finding written by this
    audit (id = directory name, `auditSource` = the audit), each once."""
    errors = list(file.messages())
    data = file.object
    if data is not None:
        source = data.get("auditSource")
        if source != audit_name:
            errors.append(f"auditSource: must be {json.dumps(audit_name)} (found "
                          f"{json.dumps(source) if 'auditSource' in data else 'nothing'})")
        if data.get("id") != file.dir_name and not any(_about_dir(e) for e in errors):
            errors.append(f"id: a finding's id must equal its directory name "
                          f"{json.dumps(file.dir_name)}")
    return tuple(dict.fromkeys(errors))


def _about_dir(error: str) -> bool:
    return error.startswith("id: a finding's id must equal its directory name")
