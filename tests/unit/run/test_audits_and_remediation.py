"""Audit phases end when their report is written and no finding is invalid; with
--code-after-audit, remediation phases fix the findings and the audits run again, until none is
left or ten cycles have run (AUD-22, AUD-23, AUD-40)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakes.session import success
from tests.unit.run.conftest import Loop

FINDING = "audit-security-1-sql-concat"


def _finding(**changes: Any) -> dict[str, Any]:
    data = {"id": FINDING, "title": "SQL built by concatenation", "category": "Security",
            "description": "src/db.py:12 builds a query from input", "status": "backlog",
            "passes": False, "priority": 1, "auditSeverity": "critical",
            "auditSource": "SECURITY", "affectedFiles": ["src/db.py"],
            "spec": "1. Use parameters.", "createdAt": "2026-01-05T09:30:15Z",
            "updatedAt": "2026-01-05T09:30:15Z"}
    return {**data, **changes}


def _audit(stamp: str, **finding: Any):  # type: ignore[no-untyped-def]
    """The agent's audit: a report and the finding."""

    def edit(project: Path) -> None:
        reports = project / ".automaker" / "audit-reports"
        reports.mkdir(parents=True, exist_ok=True)
        (reports / f"SECURITY-{stamp}.md").write_text("# SECURITY audit\n")
        target = project / ".automaker" / "features" / FINDING / "feature.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(_finding(**finding)))

    return edit


def _fix(project: Path) -> None:
    target = project / ".automaker" / "features" / FINDING / "feature.json"
    target.write_text(json.dumps(_finding(status="completed", passes=True)))


def _existing_project(loop: Loop) -> None:
    (loop.paths.root / "README.md").write_text("# Shop\n")


def test_an_audit_phase_ends_with_its_report(loop: Loop) -> None:
    _existing_project(loop)
    run = loop.run(success(_audit("20260105-093015")), success(), audit=("SECURITY",))
    assert run.code == 0
    assert run.session.kinds == ["audit"]
    (done,) = run.named("mode_done")
    assert done["report"] == ".automaker/audit-reports/SECURITY-20260105-093015.md"
    (found,) = run.named("audit_findings")
    assert found == {**found, "new": 1, "changed": 0, "invalid": []}


def test_an_invalid_finding_keeps_the_audit_going_until_fixed(loop: Loop) -> None:
    _existing_project(loop)
    run = loop.run(success(_audit("20260105-093015", auditSource="SEC")),
                   success(_audit("20260105-093016")), audit=("SECURITY",), max_iterations=5)
    assert run.session.kinds == ["audit", "audit"]
    invalid = [e["invalid"] for e in run.named("audit_findings")]
    assert invalid[0]
    assert not invalid[1]
    assert [e["kind"] for e in run.named("mode_done")] == ["audit"]


def test_remediation_fixes_the_findings_then_the_audit_runs_again(loop: Loop) -> None:
    _existing_project(loop)
    run = loop.run(success(_audit("20260105-093015")), success(_fix),
                   success(_audit("20260105-093020", status="completed", passes=True)),
                   audit=("SECURITY",), code_after_audit=True, max_iterations=3)
    assert run.code == 0
    assert run.session.kinds == ["audit", "coding", "audit"]
    assert [e["cycle"] for e in run.named("remediation_cycle")] == [1]
    phases = [(e["phase"], e["reason"]) for e in run.named("phase_end")]
    assert phases == [("audit", "mode_done"), ("remediation", "findings_fixed"),
                      ("audit", "mode_done")]


def test_remediation_gives_up_after_ten_cycles(loop: Loop) -> None:
    _existing_project(loop)
    stamps = iter(range(10_000))

    def audit_again(project: Path) -> None:
        _audit(f"20260105-09{next(stamps):04d}")(project)

    run = loop.run(success(audit_again), audit=("SECURITY",), code_after_audit=True,
                   max_iterations=1)
    assert run.code == 0
    assert [e["cycle"] for e in run.named("remediation_cycle")] == list(range(1, 11))
    (cap,) = run.named("remediation_cap")
    assert cap["unfixed"] == 1
