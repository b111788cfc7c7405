"""Audit definitions (AUD-1..5), copies (AUD-21), reports (AUD-22) and the audit prompt (AC-75)."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from aidd.audits import definitions as audit
from aidd.audits.names import kebab, normalize_name
from aidd.errors import NotFoundError, UsageError, ValidationError
from aidd.project.paths import ProjectPaths
from aidd.prompts.context import InvalidFinding
from aidd.prompts.render import PromptRenderer
from aidd.prompts.select import PromptKind
from aidd.resources import data_dir
from tests.unit.prompts.conftest import make_context

SHIPPED = [
    "ACCESSIBILITY",
    "API_DESIGN",
    "ARCHITECTURE",
    "CODE_QUALITY",
    "DEAD_CODE",
    "DEPENDENCIES",
    "DOCUMENTATION",
    "ERROR_HANDLING",
    "OBSERVABILITY",
    "PERFORMANCE",
    "SECURITY",
    "TESTING",
]
NOW = datetime(2026, 1, 5, 9, 30, 15, tzinfo=UTC)


@pytest.fixture
def project(tmp_path: Path) -> ProjectPaths:
    root = tmp_path / "shop"
    root.mkdir()
    return ProjectPaths(root)


def _local(project: ProjectPaths, name: str, text: str) -> Path:
    path = project.prompt_overrides / "audits" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _definition(body: str, **meta: str) -> str:
    fields = {"title": "Custom", "category": "Custom", "lifecycle": "development", **meta}
    head = "".join(f"{k}: {v}\n" for k, v in fields.items())
    return f"---\n{head}---\n{body}"


# -- names (AUD-2) ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "name", "expected"),
    [
        ("SECURITY", "SECURITY", "security"),
        ("SECURITY.md", "SECURITY", "security"),
        ("DEAD_CODE", "DEAD_CODE", "dead-code"),
        ("api-Design", "api-Design", "api-design"),
    ],
)
def test_names_and_kebab(raw: str, name: str, expected: str) -> None:
    assert normalize_name(raw) == name
    assert kebab(name) == expected


@pytest.mark.parametrize(
    "raw", ["", "../SECURITY", "SEC/URITY", "DEAD__CODE", "_X", "X-", "A1", "a b", "x.txt"]
)
def test_names_outside_the_grammar_are_usage_errors(raw: str) -> None:
    with pytest.raises(UsageError) as err:
        normalize_name(raw)
    assert err.value.exit_code == 2


def test_resolve_keeps_order_and_drops_duplicates(project: ProjectPaths) -> None:
    found = audit.resolve_audits(["TESTING", "SECURITY.md", "TESTING"], project)
    assert [d.name for d in found] == ["TESTING", "SECURITY"]
    assert found[1].finding_prefix == "audit-security-"


def test_unknown_audit_lists_what_exists(project: ProjectPaths) -> None:
    with pytest.raises(NotFoundError) as err:
        audit.resolve_audits(["SECURITY", "NOPE"], project)
    assert err.value.exit_code == 3
    assert "'NOPE'" in err.value.message
    assert "SECURITY" in err.value.message
    assert "DEAD_CODE" in err.value.message
    assert "SEVERITY_CLASSIFICATION" not in err.value.message  # a reference is not offered


def test_every_unknown_name_is_named_with_a_case_hint(project: ProjectPaths) -> None:
    _local(project, "BROKEN", "no front matter\n")
    with pytest.raises(NotFoundError) as err:
        audit.resolve_audits(["security", "NOPE", "TESTING"], project)
    message = err.value.message
    assert message.startswith("unknown audits 'security', 'NOPE'; available: ")
    assert "'security' -> 'SECURITY'" in message
    assert "BROKEN" in message  # exists, even if it would fail to load


@pytest.mark.parametrize("run_all", [False, True])
def test_a_broken_severity_reference_fails_resolution(project: ProjectPaths,
                                                      run_all: bool) -> None:
    """Every audit prompt carries it: check it before any agent runs (exit 7)."""
    path = _local(project, "SEVERITY_CLASSIFICATION", "no front matter\n")
    resolve = audit.all_runnable if run_all else partial(audit.resolve_audits, ["SECURITY"])
    with pytest.raises(ValidationError) as err:
        resolve(project)
    assert err.value.exit_code == 7
    assert str(path) in err.value.message


def test_bad_name_is_refused_before_lookup(project: ProjectPaths) -> None:
    with pytest.raises(UsageError):
        audit.resolve_audits(["NOPE", "../etc/passwd"], project)


def test_a_reference_cannot_run(project: ProjectPaths) -> None:
    with pytest.raises(UsageError, match="reference"):
        audit.resolve_audits(["SEVERITY_CLASSIFICATION"], project)


# -- definitions (AUD-1, AUD-3, AUD-4, AC-76) -----------------------------------------------------


def test_project_local_audit_runs_and_wins(project: ProjectPaths) -> None:
    _local(project, "CUSTOM", _definition("Check the custom thing.\n"))
    _local(project, "SECURITY", _definition("Our own security list.\n", title="Ours"))
    custom, security = audit.resolve_audits(["CUSTOM", "SECURITY"], project)
    assert custom.body == "Check the custom thing."
    assert security.title == "Ours"
    assert security.path.is_relative_to(project.prompt_overrides)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no front matter\n", "no front matter"),
        ("---\ntitle: x\n", "not closed"),
        ("---\n: [\n---\n", "not valid YAML"),
        ("---\n- a\n---\n", "mapping"),
        (_definition("b").replace("category: Custom\n", ""), "'category'"),
        (_definition("b").replace("title: Custom\n", "title: 3\n"), "'title'"),
        (_definition("b", lifecycle="someday"), "'lifecycle'"),
        (_definition("b", type="check"), "'type'"),
        (_definition("b", priority="7"), "'priority'"),
        (_definition("b", priority="true"), "'priority'"),
        (_definition("b", references="SECURITY"), "'references'"),
        (_definition("b", version="1.0"), "'version'"),
    ],
)
def test_malformed_definitions_name_file_and_key(
    project: ProjectPaths, text: str, message: str
) -> None:
    path = _local(project, "CUSTOM", text)
    with pytest.raises(ValidationError) as err:
        audit.resolve_audits(["CUSTOM"], project)
    assert err.value.exit_code == 7
    assert message in err.value.message
    assert str(path) in err.value.message


def test_optional_keys_are_typed(project: ProjectPaths) -> None:
    text = _definition(
        "b", version='"2.1"', last_updated="2026-01-05", priority="2", references="[TESTING]"
    )
    _local(project, "CUSTOM", text + "\nunknown_key: allowed\n")
    (definition,) = audit.resolve_audits(["CUSTOM"], project)
    assert definition.priority == 2
    assert definition.references == ("TESTING",)


def test_body_is_kept_in_full(project: ProjectPaths) -> None:
    body = "# Title\n\nIntro.\n\n---\n\n## After the first rule\n\ntext\n\n---\n\n## Last\n"
    _local(project, "CUSTOM", _definition(body))
    (definition,) = audit.resolve_audits(["CUSTOM"], project)
    assert definition.body == body.rstrip("\n")


def test_all_runnable_is_sorted_and_skips_references(project: ProjectPaths) -> None:
    _local(project, "Zeta", _definition("z"))
    _local(project, "ALPHA", _definition("a"))
    _local(project, "NOTES", _definition("n", type="reference"))
    names = [d.name for d in audit.all_runnable(project)]
    assert names == sorted(["ALPHA", "Zeta", *SHIPPED])
    assert "SEVERITY_CLASSIFICATION" not in names


# -- the shipped library (AUD-5) -----------------------------------------------------------------


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_audits_validate(name: str) -> None:
    path = data_dir("prompts") / "audits" / f"{name}.md"
    definition = audit.parse_definition(path, name)
    assert definition.runnable
    assert "SEVERITY_CLASSIFICATION" in definition.references
    assert 60 <= len(path.read_text().splitlines()) <= 150
    assert "\n---\n" in definition.body  # sections are separated by horizontal rules
    assert "Evidence" in definition.body
    assert "everity" in definition.body


def test_severity_reference_maps_levels_to_priorities(project: ProjectPaths) -> None:
    path = data_dir("prompts") / "audits" / "SEVERITY_CLASSIFICATION.md"
    definition = audit.parse_definition(path, "SEVERITY_CLASSIFICATION")
    assert not definition.runnable
    text = audit.severity_reference(project)
    # AutoMaker's priorities (issue 18): 1 high, 2 medium, 3 low
    for row in ("| Critical | `critical` | 1 |", "| High | `high` | 1 |",
                "| Medium | `medium` | 2 |", "| Low | `low` | 3 |"):  # fmt: skip
        assert row in text


# -- the rendered audit prompt (AUD-20, AC-71, AC-74, AC-75) ---------------------------------------


def _audit_prompt(project: ProjectPaths, name: str, **info: Any) -> str:
    (definition,) = audit.resolve_audits([name], project)
    ctx = make_context(
        project,
        PromptKind.AUDIT,
        "opencode",
        audit=audit.audit_info(definition, project, NOW)._replace(**info),
        severity=audit.severity_reference(project),
    )
    return PromptRenderer.for_project(project).render_prompt(ctx)


@pytest.mark.parametrize("name", SHIPPED)
def test_audit_prompt_holds_the_whole_body_and_no_front_matter(
    project: ProjectPaths, name: str
) -> None:
    text = _audit_prompt(project, name)
    definition = audit.load_audit(name, project)
    for line in definition.body.splitlines():
        assert line in text
    for key in ("lifecycle:", "estimated_time:", "last_updated:", "frequency:"):
        assert key not in text
    kebab = definition.kebab
    assert f".automaker/features/audit-{kebab}-<unix seconds>-<slug>/feature.json" in text
    assert f'"auditSource": "{name}"' in text
    assert f"`.automaker/audit-reports/{name}-20260105-093015.md`" in text
    assert f"## [2026-01-05] - {name} audit" in text
    assert f"`audit({kebab}): {name} audit`" in text
    assert "| Critical | `critical` | 1 |" in text  # the severity reference


def test_audit_prompt_keeps_text_after_horizontal_rules(project: ProjectPaths) -> None:
    body = "Intro {{ not_rendered }}\n\n---\n\nAFTER-RULE-ONE\n\n---\n\nAFTER-RULE-TWO\n"
    _local(project, "CUSTOM", _definition(body))
    text = _audit_prompt(project, "CUSTOM")
    assert "Intro {{ not_rendered }}" in text
    assert "AFTER-RULE-ONE" in text
    assert "AFTER-RULE-TWO" in text
    assert "lifecycle: development" not in text


def test_invalid_findings_are_listed_first(project: ProjectPaths) -> None:
    finding = InvalidFinding(
        ".automaker/features/audit-security-1-x/feature.json",
        ("id 'audit-security-2-x' differs from the directory name",),
    )
    text = _audit_prompt(project, "SECURITY", invalid_findings=(finding,))
    start = text.index("## First: repair the invalid findings")
    assert start < text.index("## Checklist")
    assert "- `.automaker/features/audit-security-1-x/feature.json`" in text
    assert "  - id 'audit-security-2-x' differs from the directory name" in text
    assert "repair the invalid findings" not in _audit_prompt(project, "SECURITY")


# -- copies next to the project (AUD-21, AC-75) ----------------------------------------------------


def test_copies_definition_references_links_and_severity(project: ProjectPaths) -> None:
    body = "See (./TESTING.md), (./../x.md), (./NOPE.md), (./bad_.md) and (./CUSTOM.md).\n"
    source = _local(project, "CUSTOM", _definition(body, references="[DEAD_CODE, MISSING]"))
    (definition,) = audit.resolve_audits(["CUSTOM"], project)
    assert audit.companions(definition, project) == (
        "DEAD_CODE",
        "TESTING",
        "SEVERITY_CLASSIFICATION",
    )
    stale = project.audits / "OTHER.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("left alone")
    (project.audits / "TESTING.md").write_text("old copy")
    written = audit.copy_definitions(definition, project)
    assert sorted(p.name for p in project.audits.iterdir()) == [
        "CUSTOM.md",
        "DEAD_CODE.md",
        "OTHER.md",
        "SEVERITY_CLASSIFICATION.md",
        "TESTING.md",
    ]
    assert len(written) == 4
    assert (project.audits / "CUSTOM.md").read_bytes() == source.read_bytes()  # front matter too
    assert (project.audits / "TESTING.md").read_text().startswith("---\ntitle: Testing")
    assert stale.read_text() == "left alone"
    assert not (project.root / "x.md").exists()


# -- reports (AUD-22, AC-73) ----------------------------------------------------------------------


def test_report_path_is_utc() -> None:
    local = NOW.astimezone(timezone(timedelta(hours=5)))
    assert audit.report_path("SECURITY", local) == (
        ".automaker/audit-reports/SECURITY-20260105-093015.md"
    )


def _report(project: ProjectPaths, name: str, text: str = "# report\n") -> Path:
    project.audit_reports.mkdir(parents=True, exist_ok=True)
    path = project.audit_reports / name
    path.write_text(text)
    return path


def test_report_must_be_new_or_changed_since_the_phase_started(project: ProjectPaths) -> None:
    old = _report(project, "SECURITY-20260105-000000.md")  # earlier today
    os.utime(old, (2_000_000_000, 2_000_000_000))  # even a timestamp in the future
    before = audit.report_snapshot(project)
    assert audit.report_written(project, "SECURITY", before) is None
    fresh = _report(project, "security-anything.md")
    assert audit.report_written(project, "SECURITY", before) == fresh
    fresh.unlink()
    old.write_text("# report, rewritten in this phase\n")
    assert audit.report_written(project, "SECURITY", before) == old


def test_a_fresh_report_counts_whatever_its_timestamp(project: ProjectPaths) -> None:
    """A file-system clock behind the wall clock must not hide a report (AUD-22)."""
    before = audit.report_snapshot(project)
    lagging = _report(project, "SECURITY-20260105-093015.md")
    os.utime(lagging, (1_000_000, 1_000_000))
    assert audit.report_written(project, "SECURITY", before) == lagging


def test_report_name_must_match_exactly(project: ProjectPaths) -> None:
    before = audit.report_snapshot(project)
    _report(project, "SECURITY-20260105-093015.md")
    _report(project, "20260105-SEC.md")
    _report(project, "SEC.md")
    _report(project, "SEC-notes.txt")
    assert audit.report_written(project, "SEC", before) is None
    _report(project, "SECURITY_HEADERS-20260105-093015.md")
    assert audit.report_written(project, "SECURITY", before) is not None


def test_report_of_a_longer_audit_name_does_not_count(project: ProjectPaths) -> None:
    _local(project, "DEAD", _definition("d"))
    before = audit.report_snapshot(project)
    _report(project, "DEAD_CODE-20260105-093015.md")
    _report(project, "dead-code-20260105-093015.md")
    assert audit.report_written(project, "DEAD", before) is None
    mine = _report(project, "DEAD-20260105-093015.md")
    assert audit.report_written(project, "DEAD", before) == mine


def test_no_report_folder_means_no_report(project: ProjectPaths) -> None:
    assert audit.report_written(project, "SECURITY", {}) is None
