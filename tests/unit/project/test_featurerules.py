"""FEA-10 rules and the FEA-11 id grammar (AC-64)."""

from __future__ import annotations

from typing import Any

import pytest

from aidd.project.featurerules import ID_RE, validate_feature


def feature(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "feature-1-login",
        "category": "Core",
        "description": "Users can log in",
        "title": None,
    }
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


def errors(data: Any, dir_name: str = "feature-1-login", known: tuple[str, ...] = ()) -> list[str]:
    return validate_feature(data, dir_name, set(known))


@pytest.mark.parametrize(
    "fid",
    [
        "feature-123-abc",
        "feature-1736000000-login",
        "audit-dead-code-1736-x",
        "audit-security-1-A-b-9",
        "spernakit-2-x",
        "remediation-x",
        "remediation-3-fix-it",
    ],
)
def test_valid_ids(fid: str) -> None:
    assert ID_RE.fullmatch(fid)
    assert errors(feature(id=fid)) == []


@pytest.mark.parametrize(
    "fid",
    [
        "my-feature",
        "audit-dead_code-1-x",
        "feature-abc-x",
        "feature-1-",
        "feature-1-a/b",
        "feature-1-a.b",
        "feature-1-a b",
        "feature-1-x\n",
        "Feature-1-x",
        "audit--1-x",
    ],
)
def test_invalid_ids(fid: str) -> None:
    errs = errors(feature(id=fid))
    assert len(errs) == 1
    assert errs[0].startswith("id: ")
    assert "grammar" in errs[0]


def test_valid_minimal_and_full() -> None:
    full = feature(
        passes=True,
        titleGenerating=False,
        skipTests=None,
        requirePlanApproval=True,
        priority=2,
        spec="s",
        model="m",
        error=None,
        summary="x",
        branchName="b",
        startedAt="t",
        createdAt="t",
        updatedAt="t",
        dependencies=["feature-2-x"],
        imagePaths=[],
        textFilePaths=[1, 2],
        descriptionHistory=[{}],
        status="waiting_approval",
        thinkingLevel="ultrathink",
        reasoningEffort="xhigh",
        planningMode="full",
        planSpec={"version": 1, "reviewedByUser": False, "tasksCompleted": 0, "tasksTotal": 3,
                  "status": "approved", "content": "anything"},
        affectedFiles=["a.py"],
        auditSeverity="high",
        steps=["a"],
    )  # fmt: skip
    assert errors(feature()) == []
    assert errors(full, known=("feature-2-x",)) == []


def test_all_errors_of_a_file_are_collected() -> None:
    data = {"passes": "yes", "priority": "high", "status": "done", "dependencies": "x"}
    errs = errors(data)
    fields = [e.split(":")[0] for e in errs]
    assert fields == ["id", "category", "description", "title", "passes", "priority",
                      "status", "dependencies"]  # fmt: skip


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"id": ""}, "id"),
        ({"id": 5}, "id"),
        ({"category": ""}, "category"),
        ({"description": ["x"]}, "description"),
        ({"title": ...}, "title"),
        ({"title": 3}, "title"),
        ({"passes": 1}, "passes"),
        ({"titleGenerating": "true"}, "titleGenerating"),
        ({"skipTests": 0}, "skipTests"),
        ({"requirePlanApproval": []}, "requirePlanApproval"),
        ({"priority": True}, "priority"),
        ({"priority": "1"}, "priority"),
        ({"spec": 1}, "spec"),
        ({"updatedAt": {}}, "updatedAt"),
        ({"imagePaths": "a.png"}, "imagePaths"),
        ({"descriptionHistory": {}}, "descriptionHistory"),
        ({"status": "done"}, "status"),
        ({"status": 3}, "status"),
        ({"thinkingLevel": "max"}, "thinkingLevel"),
        ({"reasoningEffort": "maximal"}, "reasoningEffort"),
        ({"planningMode": "none"}, "planningMode"),
        ({"planSpec": []}, "planSpec"),
        ({"planSpec": {"version": "1"}}, "planSpec.version"),
        ({"planSpec": {"reviewedByUser": "no"}}, "planSpec.reviewedByUser"),
        ({"planSpec": {"tasksTotal": True}}, "planSpec.tasksTotal"),
        ({"planSpec": {"status": "done"}}, "planSpec.status"),
        ({"dependencies": [1]}, "dependencies"),
    ],
)
def test_each_rule_names_its_field(fields: dict[str, Any], field: str) -> None:
    errs = errors(feature(**fields))
    assert len(errs) == 1, errs
    assert errs[0].startswith(field + ": ")


def test_empty_enums_and_nulls_are_allowed() -> None:
    data = feature(status="", thinkingLevel="", reasoningEffort=None, planningMode="",
                   passes=None, priority=None, dependencies=None, planSpec=None)  # fmt: skip
    assert errors(data) == []


def test_unknown_dependencies_are_reported_each() -> None:
    data = feature(dependencies=["feature-2-x", "feature-3-y", "feature-4-z"])
    errs = errors(data, known=("feature-3-y",))
    assert errs == [
        'dependencies: unknown feature id "feature-2-x"',
        'dependencies: unknown feature id "feature-4-z"',
    ]


def test_finding_id_must_equal_directory() -> None:
    fid = "audit-security-1-xss"
    finding = feature(id=fid, auditSource="SECURITY")
    assert errors(finding, dir_name=fid) == []
    errs = errors(finding, dir_name="audit-security-1-other")
    assert errs == ['id: a finding\'s id must equal its directory name "audit-security-1-other"']
    errs = errors(feature(auditSource="SECURITY"), dir_name="feature-1-login")
    assert len(errs) == 1
    assert "must start with 'audit-'" in errs[0]
    # outside findings the directory name need not equal the id
    assert errors(feature(), dir_name="anything else") == []
    assert errors(feature(auditSource=""), dir_name="x") == []


@pytest.mark.parametrize("data", [[], "x", 3, None, True])
def test_not_an_object(data: Any) -> None:
    errs = errors(data)
    assert len(errs) == 1
    assert errs[0].startswith("not a JSON object")
