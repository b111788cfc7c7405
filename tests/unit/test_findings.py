"""Findings written during an audit phase: new, changed, invalid (AUD-23)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from aidd.audits.findings import check_findings, snapshot
from aidd.project.paths import ProjectPaths
from tests.featurefiles import write

PREFIX = "audit-security-"


@pytest.fixture
def project(tmp_path: Path) -> ProjectPaths:
    root = tmp_path / "shop"
    (root / ".automaker" / "features").mkdir(parents=True)
    return ProjectPaths(root)


def _write(project: ProjectPaths, directory: str, mtime_ns: int | None = None,
           **changes: Any) -> Path:
    data: dict[str, Any] = {"id": directory, "title": "t", "category": "Security",
                            "description": "d", "status": "backlog", "passes": False,
                            "auditSource": "SECURITY"}
    data.update(changes)
    path = write(project, directory, {k: v for k, v in data.items() if v is not None})
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    return path


def _check(project: ProjectPaths, before: dict[str, int]) -> Any:
    return check_findings(project, "SECURITY", PREFIX, before)


def test_only_findings_touched_in_the_phase_are_judged(project: ProjectPaths) -> None:
    _write(project, "audit-security-1-old", mtime_ns=10**18, category=None)  # invalid, untouched
    _write(project, "audit-security-1-kept", mtime_ns=10**18)
    _write(project, "feature-1-other", mtime_ns=10**18)
    before = snapshot(project, PREFIX)
    assert sorted(before) == ["audit-security-1-kept", "audit-security-1-old"]
    assert _check(project, before).invalid == ()
    _write(project, "audit-security-1-kept", title="changed")
    _write(project, "audit-security-2-new")
    found = _check(project, before)
    assert (found.new, found.changed, found.invalid) == (1, 1, ())


def test_invalid_findings_carry_their_path_and_each_error_once(project: ProjectPaths) -> None:
    _write(project, "audit-security-2-a", id="audit-security-2-b", auditSource="SEC")
    _write(project, "audit-security-2-c", auditSource=None, category=None)
    _write(project, "audit-security-2-d")
    write(project, "audit-security-2-d", "{")
    found = _check(project, {})
    by_path = {f.path: f.errors for f in found.invalid}
    assert list(by_path) == [f".automaker/features/audit-security-2-{x}/feature.json"
                             for x in "acd"]
    a, c, d = by_path.values()
    assert [e for e in a if "directory name" in e] == [
        'id: a finding\'s id must equal its directory name "audit-security-2-a"']
    assert 'auditSource: must be "SECURITY" (found "SEC")' in a
    assert 'auditSource: must be "SECURITY" (found nothing)' in c
    assert any(e.startswith("category:") for e in c)
    assert d[0].startswith("invalid JSON")


def test_a_longer_audits_findings_are_not_this_audits(project: ProjectPaths) -> None:
    local = project.prompt_overrides / "audits" / "SECURITY_HEADERS.md"
    local.parent.mkdir(parents=True)
    local.write_text("---\ntitle: H\ncategory: H\nlifecycle: development\n---\nbody\n")
    _write(project, "audit-security-headers-3-csp", auditSource="SECURITY_HEADERS")
    assert snapshot(project, PREFIX) == {}
    assert _check(project, {}).invalid == ()
    assert snapshot(project, "audit-security-headers-") != {}
