"""FEA-10 rules and the FEA-11 id grammar (AC-64)."""

from __future__ import annotations

from typing import Any

import pytest

from aidd.project.featurerules import feature_errors, feature_warnings


def feature(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "feature-1-login",
        "category": "Core",
        "description": "Users can log in",
        "title": None,
    }
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


def errors(data: Any, dir_name: str = "feature-1-login") -> list[str]:
    return feature_errors(data, dir_name)


def warnings(data: Any, dir_name: str = "feature-1-login", known: tuple[str, ...] = ()
             ) -> list[str]:
    return feature_warnings(data, dir_name, set(known))


@pytest.mark.parametrize(
    "fid",
    [
        "feature-1736000000-login",
        "audit-dead-code-1736-x",
        "remediation-3-fix-it",
        # AutoMaker's writers: a UUID, an issue's, its own generator's, a model's choice
        "5f0c2a9e-3b7d-4c1e-9a6f-2d8b7e4c1a03",
        "issue-42-5f0c2a9e-3b7d-4c1e-9a6f-2d8b7e4c1a03",
        "feature-1767000000000-k2j4h5g6f",
        "user-authentication",
        "Feature 7.v2",
    ],
)
def test_any_non_empty_id_is_valid(fid: str) -> None:
    assert errors(feature(id=fid), dir_name=fid) == []
    assert warnings(feature(id=fid), dir_name=fid) == []


@pytest.mark.parametrize("fid", ["a/b", "..", ".", "x\\y", "nul\0"])
def test_an_id_that_is_no_folder_name_is_a_warning(fid: str) -> None:
    assert errors(feature(id=fid)) == []
    (warning,) = warnings(feature(id=fid), dir_name="x")
    assert warning.startswith("id: ")
    assert "not a folder name" in warning


def test_a_directory_named_otherwise_is_a_warning() -> None:
    (warning,) = warnings(feature(), dir_name="login")
    assert warning.startswith("id: differs from its directory name")


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
    assert errors(full) == []
    assert warnings(full, known=("feature-2-x",)) == []


def test_all_errors_of_a_file_are_collected() -> None:
    data = {"passes": "yes", "priority": "high", "status": 7, "dependencies": "x"}
    errs = errors(data)
    fields = [e.split(":")[0] for e in errs]
    assert fields == ["id", "category", "description", "passes", "status", "priority",
                      "dependencies"]  # fmt: skip


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"id": ""}, "id"),
        ({"id": 5}, "id"),
        ({"id": ...}, "id"),
        ({"category": 3}, "category"),
        ({"category": ...}, "category"),
        ({"description": ["x"]}, "description"),
        ({"description": ...}, "description"),
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


def test_unknown_dependencies_are_warnings_each() -> None:
    data = feature(dependencies=["feature-2-x", "feature-3-y", "feature-4-z"])
    assert errors(data) == []
    warns = warnings(data, known=("feature-3-y",))
    assert [w.split(" (")[0] for w in warns] == [
        'dependencies: unknown feature id "feature-2-x"',
        'dependencies: unknown feature id "feature-4-z"',
    ]


@pytest.mark.parametrize(
    ("fields", "start"),
    [
        ({"title": ...}, None),  # optional in AutoMaker
        ({"description": ""}, "description: empty"),  # what AutoMaker's create() writes
        ({"category": ""}, "category: empty"),
        ({"status": "done"}, 'status: "done" means nothing'),
        ({"status": "pipeline_review"}, None),
        ({"status": "pipeline_"}, 'status: "pipeline_" means nothing'),
        ({"status": "pending"}, None),
        ({"passes": True, "status": "backlog"}, "passes: true, but status"),
        ({"passes": True}, None),  # aidd's first vocabulary: no status, `passes` decides
        # issue 31 item 1: reopened on the board, or an earlier aidd's done; both meanings named
        ({"passes": True, "status": "in_progress"},
         'passes: true, but status "in_progress" says in progress: reopened on the board'),
        ({"passes": True, "status": "pipeline_review"}, "passes: true, but status"),
        ({"passes": False, "status": "verified"}, None),  # status decides
        ({"priority": 4}, "priority: 4 is outside 1-3"),
        ({"priority": 0}, "priority: 0 is outside 1-3 (AutoMaker shows no priority)"),
        ({"priority": 3}, None),
    ],
)
def test_stricter_rules_are_warnings(fields: dict[str, Any], start: str | None) -> None:
    data = feature(**fields)
    assert errors(data) == []
    warns = warnings(data)
    assert warns == [] if start is None else (len(warns) == 1 and warns[0].startswith(start)), \
        warns


def test_finding_id_must_equal_directory() -> None:
    fid = "audit-security-1-xss"
    finding = feature(id=fid, auditSource="SECURITY")
    assert errors(finding, dir_name=fid) == []
    errs = errors(finding, dir_name="audit-security-1-other")
    assert errs == ['id: a finding\'s id must equal its directory name "audit-security-1-other"']
    errs = errors(feature(auditSource="SECURITY"), dir_name="feature-1-login")
    assert len(errs) == 1
    assert "must start with 'audit-'" in errs[0]
    # outside findings a directory named otherwise is a warning only
    assert errors(feature(), dir_name="anything else") == []
    assert errors(feature(auditSource=""), dir_name="x") == []


@pytest.mark.parametrize("data", [[], "x", 3, None, True])
def test_not_an_object(data: Any) -> None:
    errs = errors(data)
    assert len(errs) == 1
    assert errs[0].startswith("not a JSON object")


def test_type_errors_come_in_the_rule_order_whatever_the_file_order() -> None:
    data = {"id": "a", "category": "c", "description": "d", "priority": "high",
            "imagePaths": "x.png", "title": 3, "passes": "yes", "skipTests": None}
    assert feature_errors(data, "a") == [
        "passes: must be a boolean (found string)",
        "title: must be a string (found number)",
        "imagePaths: must be an array (found string)",
        "priority: must be a number (found string)",
    ]
