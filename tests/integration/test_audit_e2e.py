"""Audit mode through the real `aidd` process and the fake agent CLI (audits.md, AC-6, AC-71..78).

The fake agent writes reports and findings with `write_file`; what aidd sent is read back from
the `NNN.prompt.md` files (the fake's stdin digest proves they are what the agent received).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from aidd.audits.definitions import SEVERITY_REFERENCE
from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.integration.runs import (
    LIMITS,
    OK,
    READ,
    REPO,
    RunAidd,
    events,
    log,
    prompt,
    tree_snapshot,
)

SAY = [READ, {"say": "looked around"}, {"finish": "stop"}]
AUDITS = REPO / "prompts" / "audits"
FEATURES = ".automaker/features"
REPORTS = ".automaker/audit-reports"


# -- helpers -------------------------------------------------------------------------------------
def body(path: Path) -> str:
    """A definition's text after its front matter."""
    return path.read_text().split("\n---\n", 1)[1]


def report(name: str, stamp: str = "20260105-093015") -> dict[str, Any]:
    return {"write_file": f"{REPORTS}/{name}-{stamp}.md", "text": f"# {name} audit\nScore 90\n"}


def finding_data(fid: str, source: str = "SECURITY", **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": fid, "title": "SQL built by concatenation", "category": "Security",
        "description": "src/db.py:12 builds a query from input", "status": "backlog",
        "passes": False, "priority": 1, "auditSeverity": "critical", "auditSource": source,
        "affectedFiles": ["src/db.py"], "spec": "1. Use parameters.",
        "createdAt": "2026-01-05T09:30:15Z", "updatedAt": "2026-01-05T09:30:15Z",
    }
    data.update(changes)
    return {key: value for key, value in data.items() if value is not None}


def finding(fid: str, **changes: Any) -> dict[str, Any]:
    """A write_file step putting a finding at features/<fid>/feature.json."""
    return {"write_file": f"{FEATURES}/{fid}/feature.json",
            "text": json.dumps(finding_data(fid, **changes))}


def definition(root: Path, name: str, text_body: str, **meta: str) -> Path:
    fields = {"title": name.title(), "category": "Custom", "lifecycle": "development", **meta}
    head = "".join(f"{key}: {value}\n" for key, value in fields.items())
    path = root / ".automaker" / "prompts" / "audits" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{head}---\n{text_body}")
    return path


def audit_names(fake_agent: FakeAgent) -> list[str | None]:
    """The audit each agent invocation was started for (AIDD_AUDIT_NAME, or None)."""
    return [r["env"].get("AIDD_AUDIT_NAME") for r in fake_agent.records()]


# -- a two-audit run (AC-71, AC-75) ----------------------------------------------------------------
def test_two_audits_run_one_after_another_with_their_own_prompts(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    fake_agent.script([*SAY, report("SECURITY")], SAY, [*SAY, report("ARCHITECTURE")])
    res = run_aidd("--project-dir", str(project), "--audit", "SECURITY,ARCHITECTURE",
                   "--audit-on-completion", "TESTING", "--max-iterations", "3", *LIMITS, env=env)
    assert res.code == 0, res.err
    assert audit_names(fake_agent) == ["SECURITY", "ARCHITECTURE", "ARCHITECTURE"]
    assert "--audit-on-completion is ignored in an audit run" in res.out  # AUD-30
    # log numbering continues; each audit counts its own iterations
    assert "Iteration 1 of 3 (log 001)" in log(project, 1)
    assert "Phase: audit 1 of 2: SECURITY" in log(project, 1)
    assert "Iteration 1 of 3 (log 002)" in log(project, 2)
    assert "Phase: audit 2 of 2: ARCHITECTURE" in log(project, 2)
    assert "Iteration 2 of 3 (log 003)" in log(project, 3)
    ends = [(e["audit"], e["reason"], e["iterations"]) for e in events(project, "phase_end")]
    assert ends == [("SECURITY", "mode_done", 1), ("ARCHITECTURE", "mode_done", 2)]
    # what was sent is what the prompt files hold
    for number, record in enumerate(fake_agent.records(), 1):
        sent = hashlib.sha256(prompt(project, number).encode()).hexdigest()
        assert record["stdin_sha256"] == sent
    severity = body(AUDITS / f"{SEVERITY_REFERENCE}.md")
    for number, name, other in ((1, "SECURITY", "ARCHITECTURE"), (3, "ARCHITECTURE", "SECURITY")):
        text = prompt(project, number)
        own = body(AUDITS / f"{name}.md")
        assert own.split("\n---\n", 1)[1].strip() in text  # everything past the first rule
        assert all(line in text for line in own.splitlines())
        assert own.strip().splitlines()[-1] in text
        assert severity.strip().splitlines()[-1] in text
        assert f"audit-{name.lower()}-" in text
        assert f'"auditSource": "{name}"' in text
        assert f"{REPORTS}/{name}-" in text
        assert body(AUDITS / f"{other}.md").strip().splitlines()[-1] not in text
        assert "lifecycle:" not in text  # the front matter is stripped
    copies = sorted(p.name for p in (project / ".automaker" / "audits").iterdir())
    assert copies == ["ARCHITECTURE.md", "SECURITY.md", f"{SEVERITY_REFERENCE}.md"]


def test_audit_all_runs_every_audit_but_references_in_name_order(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-72, with a project-only audit and a project-only reference."""
    definition(project, "CUSTOM_CHECK", "Check the custom thing.\n")
    definition(project, "HOUSE_RULES", "Only a reference.\n", type="reference")
    fake_agent.script([{"exit": 0}])
    res = run_aidd("--project-dir", str(project), "--audit-all", "--max-iterations", "1", *LIMITS,
                   env=env)
    assert res.code == 0, res.err
    shipped = [p.stem for p in AUDITS.glob("*.md") if p.stem != SEVERITY_REFERENCE]
    expected = sorted([*shipped, "CUSTOM_CHECK"])
    assert len(expected) == 13
    assert audit_names(fake_agent) == expected
    assert [e["audit"] for e in events(project, "phase_start")] == expected
    assert f"audit {len(expected)} of {len(expected)}: {expected[-1]}" in log(project, 13)
    assert "Check the custom thing." in prompt(project, expected.index("CUSTOM_CHECK") + 1)


# -- names validated before anything runs (AC-6) ---------------------------------------------------
@pytest.mark.parametrize(
    ("flag", "value", "code", "says"),
    [
        ("--audit", "NOPE", 3, "unknown audit 'NOPE'"),
        ("--audit", "SECURITY,NOPE,ALSO_NOPE", 3, "unknown audits 'NOPE', 'ALSO_NOPE'"),
        ("--audit", "security", 3, "'security' -> 'SECURITY'"),
        ("--audit-on-completion", "NOPE", 3, "unknown audit 'NOPE'"),
        ("--audit", "../x", 2, "'../x'"),
        ("--audit", "a/b", 2, "'a/b'"),
        ("--audit", SEVERITY_REFERENCE, 2, "reference"),
    ],
)
def test_bad_audit_names_exit_before_any_agent_run(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
    flag: str, value: str, code: int, says: str
) -> None:
    before = tree_snapshot(project)
    res = run_aidd("--project-dir", str(project), flag, value, *LIMITS, env=env)
    assert res.code == code, res.err
    assert says in res.err
    assert fake_agent.records() == []
    assert tree_snapshot(project) == before
    if code == 3:
        listed = res.err.split("available: ", 1)[1]
        assert "SECURITY" in listed
        assert "ARCHITECTURE" in listed
        assert SEVERITY_REFERENCE not in listed  # a reference is not offered


def test_project_audit_without_category_exits_7(run_aidd: RunAidd, env: dict[str, str],
                                               fake_agent: FakeAgent, project: Path) -> None:
    """AC-76."""
    path = definition(project, "CUSTOM", "Check.\n")
    path.write_text(path.read_text().replace("category: Custom\n", ""))
    res = run_aidd("--project-dir", str(project), "--audit", "CUSTOM", *LIMITS, env=env)
    assert res.code == 7, res.err
    assert "'category'" in res.err
    assert "CUSTOM.md" in res.err
    assert fake_agent.records() == []


def test_broken_project_severity_reference_exits_7_at_startup(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """Every audit prompt needs the severity reference: a broken override is found up front,
    not as a crash at the first prompt."""
    definition(project, SEVERITY_REFERENCE, "Levels.\n", type="reference", category="")
    res = run_aidd("--project-dir", str(project), "--audit", "SECURITY", *LIMITS, env=env)
    assert res.code == 7, res.err
    assert f"{SEVERITY_REFERENCE}.md" in res.err
    assert fake_agent.records() == []


# -- completion by report (AC-73) ------------------------------------------------------------------
def test_only_a_report_for_this_audit_written_in_this_run_ends_it(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    definition(project, "SECURITY_HEADERS", "Check the headers.\n")
    reports = project / REPORTS
    reports.mkdir(parents=True)
    old = reports / "SECURITY-20200101-000000.md"
    old.write_text("old\n")
    os.utime(old, (1577836800, 1577836800))
    (reports / "SECURITY-today.md").write_text("written before this run\n")
    fake_agent.script([*SAY, report("SECURITY_HEADERS"), report("security-headers")],
                      [*SAY, report("SECURITY", "20990101-000000")], SAY)
    res = run_aidd("--project-dir", str(project), "--audit", "SECURITY", "--max-iterations", "4",
                   *LIMITS, env=env)
    assert res.code == 0, res.err
    assert len(fake_agent.records()) == 2
    (done,) = events(project, "mode_done")
    assert done["report"] == f"{REPORTS}/SECURITY-20990101-000000.md"
    assert events(project, "phase_end")[0]["iterations"] == 2
    assert "Phase: audit: SECURITY\n" in log(project, 1)  # AUD-11: "i of N" only when N > 1


# -- findings validated after each iteration (AUD-23) ----------------------------------------------
def test_invalid_findings_are_reported_by_path_and_block_the_end(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    bad = "audit-security-1767605415-bad-query"
    good = "audit-security-1767605415-open-cors"
    broken = finding(bad, id="audit-security-1-other", auditSource="SEC", category=None)
    fake_agent.script([*SAY, finding(good), broken, report("SECURITY")],
                      [*SAY, finding(bad)])
    res = run_aidd("--project-dir", str(project), "--audit", "SECURITY", "--max-iterations", "4",
                   *LIMITS, env=env)
    assert res.code == 0, res.err
    assert len(fake_agent.records()) == 2
    path = f"{FEATURES}/{bad}/feature.json"
    first = [e["invalid"] for e in events(project, "audit_findings")]
    assert [[f["path"] for f in found] for found in first] == [[path], []]
    errors = first[0][0]["errors"]
    assert sum("directory name" in e for e in errors) == 1
    assert any(e.startswith("auditSource:") for e in errors)
    assert any(e.startswith("category:") for e in errors)
    for text in (res.out, log(project, 1)):
        assert "2 new findings, 0 changed, 1 invalid" in text
        assert f"invalid finding {path}:" in text
    assert "2 new findings, 0 changed, 0 invalid" in log(project, 2)  # counted per phase
    retry = prompt(project, 2)
    assert "repair the invalid findings" in retry
    assert f"`{path}`" in retry
    assert "repair the invalid findings" not in prompt(project, 1)


def test_invalid_finding_is_left_as_the_agent_wrote_it(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-74: the invalid finding is logged and listed in the next prompt, byte-identical."""
    fid = "audit-security-1767605415-bad-query"
    text = json.dumps({"id": "audit-security-1-other", "category": "Security",
                       "description": "d", "status": "backlog", "passes": False,
                       "auditSource": "SECURITY"}, indent=3) + "\n  \n"
    fake_agent.script([{"write_file": f".automaker/features/{fid}/feature.json", "text": text},
                       *OK])
    res = run_aidd("--project-dir", str(project), "--audit", "SECURITY", "--max-iterations", "2",
                   *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    path = project / ".automaker" / "features" / fid / "feature.json"
    assert path.read_text() == text
    rel = f".automaker/features/{fid}/feature.json"
    assert f"invalid finding {rel}:" in log(project, 1)
    assert f"`{rel}`" in prompt(project, 2)


# -- project-local definitions (AUD-1, AUD-21, AC-75, AC-76) ---------------------------------------
def test_project_override_and_project_only_audit_are_used(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    override = definition(
        project, "SECURITY",
        "Our own list.\n\n---\n\nAfter the rule: check [arch](./ARCHITECTURE.md), "
        "not [x](../x.md).\n",
        title="Shop security",
    )
    definition(project, "PAYMENTS", "Check the payment flow.\n")
    fake_agent.script([{"exit": 0}])
    res = run_aidd("--project-dir", str(project), "--audit", "SECURITY,PAYMENTS.md",
                   "--max-iterations", "1", *LIMITS, env=env)
    assert res.code == 0, res.err
    assert audit_names(fake_agent) == ["SECURITY", "PAYMENTS"]
    security = prompt(project, 1)
    assert "After the rule: check [arch](./ARCHITECTURE.md)" in security
    assert "# Shop security audit" in security
    assert body(AUDITS / "SECURITY.md").strip().splitlines()[-1] not in security
    assert "Check the payment flow." in prompt(project, 2)
    assert "audit-payments-" in prompt(project, 2)
    copies = project / ".automaker" / "audits"
    assert (copies / "SECURITY.md").read_text() == override.read_text()
    assert (copies / "ARCHITECTURE.md").is_file()
    assert not (project / ".automaker" / "x.md").exists()


# -- post-completion audits (AC-77) ----------------------------------------------------------------
def _feature(root: Path, passes: bool) -> None:
    feature(root, description="a", status="completed" if passes else "backlog", passes=passes)
    (root / ".automaker" / "app_spec.txt").write_text("spec\n")


def test_audit_on_completion_runs_after_confirmed_completion_and_exits_73(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    _feature(project, passes=True)
    fake_agent.script(SAY, [*SAY, report("SECURITY")])
    res = run_aidd("--project-dir", str(project), "--audit-on-completion", "SECURITY",
                   "--max-iterations", "3", *LIMITS, env=env)
    assert res.code == 73, res.err
    assert audit_names(fake_agent) == [None, "SECURITY"]
    assert "completion review" in log(project, 1)
    assert "Phase: post-completion audit 1 of 1: SECURITY" in log(project, 2)
    assert res.out.index("project completion confirmed") < res.out.index("Sending audit prompt")
    assert (project / ".automaker" / ".project_completed").is_file()
    assert events(project, "run_end")[0]["exit_code"] == 73


def test_audit_on_completion_is_skipped_when_not_complete(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    _feature(project, passes=False)
    fake_agent.script(SAY)
    res = run_aidd("--project-dir", str(project), "--audit-on-completion", "SECURITY",
                   "--max-iterations", "1", *LIMITS, env=env)
    assert res.code == 0, res.err
    assert audit_names(fake_agent) == [None]
    assert "project not complete; skipping post-completion audits" in res.out
    assert not events(project, "phase_start")[1:]


# -- remediation (AC-78) ---------------------------------------------------------------------------
def test_code_after_audit_fixes_findings_then_reaudits_and_ends(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    fid = "audit-security-1767605415-bad-query"
    fake_agent.script([*SAY, finding(fid), report("SECURITY")],
                      [*SAY, finding(fid, passes=True, status="completed")],
                      [*SAY, report("SECURITY", "20990101-000000")])
    res = run_aidd("--project-dir", str(project), "--audit", "SECURITY", "--todo",
                   "--code-after-audit", "--max-iterations", "3", *LIMITS, env=env)
    assert res.code == 0, res.err
    assert audit_names(fake_agent) == ["SECURITY", None, "SECURITY"]
    assert "Phase: remediation cycle 1" in log(project, 2)
    assert "Prompt: coding (remediation phase)" in log(project, 2)
    assert "Fix the audit findings" in prompt(project, 2)
    assert "no unfixed findings left" in res.out
    assert [e["cycle"] for e in events(project, "remediation_cycle")] == [1]
    assert events(project, "remediation_cap") == []
    assert "maximum remediation cycles" not in res.out


def test_code_after_audit_stops_at_ten_cycles_with_a_warning(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    fid = "audit-security-1767605415-bad-query"
    path = project / FEATURES / fid / "feature.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(finding_data(fid)))
    fake_agent.script([{"exit": 0}])
    res = run_aidd("--project-dir", str(project), "--audit", "SECURITY", "--code-after-audit",
                   "--max-iterations", "1", *LIMITS, env=env)
    assert res.code == 0, res.err
    assert audit_names(fake_agent) == ["SECURITY", *[None, "SECURITY"] * 10]
    assert "WARN maximum remediation cycles (10) reached; 1 findings remain" in res.out
    assert [e["cycle"] for e in events(project, "remediation_cycle")] == list(range(1, 11))
    assert [e["unfixed"] for e in events(project, "remediation_cap")] == [1]
    assert "Phase: remediation cycle 10" in log(project, 20)
    assert events(project, "run_end")[0]["exit_code"] == 0
