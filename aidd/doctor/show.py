"""`aidd --doctor`'s output: one line per check (its fix on the line below a warning or a
failure) and a summary, or one JSON document; the exit code of the worst failure."""

from __future__ import annotations

from collections import Counter
from typing import Any

from aidd import __version__
from aidd.clock import Clock
from aidd.config import Settings
from aidd.console import json_text, print_out
from aidd.doctor.checkup import run_doctor
from aidd.doctor.findings import Finding, Status, exit_code
from aidd.project.paths import ProjectPaths

_NAME_WIDTH = 15


def print_doctor(settings: Settings, paths: ProjectPaths, clock: Clock) -> int:
    findings = run_doctor(settings, paths, clock)
    code = exit_code(findings)
    if settings.actions.json:
        print_out(json_text(as_json(settings, findings)))
    else:
        print_out(as_text(settings, findings))
    return int(code)


def line(finding: Finding) -> str:
    """`warn  disk            only 512 MiB free in /srv`, as a run also shows it."""
    return f"{finding.status.value:<5} {finding.name:<{_NAME_WIDTH}} {finding.detail}"


def fix_line(finding: Finding) -> str:
    return f"{'':<5} {'':<{_NAME_WIDTH}} fix: {finding.fix}"


def as_text(settings: Settings, findings: list[Finding]) -> str:
    lines = [f"aidd {__version__} doctor: --cli {settings.cli}, project {settings.project_dir}"]
    for finding in findings:
        lines.append(line(finding))
        if finding.fix and finding.status in (Status.WARN, Status.FAIL):
            lines.append(fix_line(finding))
    lines.append(summary(findings))
    return "\n".join(lines) + "\n"


def summary(findings: list[Finding]) -> str:
    counts = Counter(f.status for f in findings)
    parts = [f"{counts[Status.OK]} ok", _plural(counts[Status.WARN], "warning"),
             _plural(counts[Status.FAIL], "failure")]
    if counts[Status.SKIP]:
        parts.append(f"{counts[Status.SKIP]} skipped")
    return f"doctor: {', '.join(parts)}; exit {int(exit_code(findings))}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def as_json(settings: Settings, findings: list[Finding]) -> dict[str, Any]:
    counts = Counter(f.status for f in findings)
    return {
        "aidd_version": __version__,
        "cli": settings.cli,
        "project_dir": str(settings.project_dir),
        "offline": settings.actions.offline,
        "exit_code": int(exit_code(findings)),
        "summary": {status.value: counts[status] for status in Status},
        "checks": [{"name": f.name, "status": f.status.value, "detail": f.detail,
                    "fix": f.fix or None, "exit_code": int(f.code) if f.failed else None}
                   for f in findings],
    }
