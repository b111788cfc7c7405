"""`--check-features` output and exit codes (FEA-20, FEA-21, AC-63..65; errors and warnings as
issue 18 splits them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aidd.errors import ExitCode, NotFoundError
from aidd.project.paths import ProjectPaths
from aidd.reports.featurecheck import ALL_VALID, NONE_FOUND, check_features
from tests.featurefiles import feat, write


@pytest.fixture
def paths(tmp_path: Path) -> ProjectPaths:
    p = ProjectPaths(tmp_path / "my project")
    p.features.mkdir(parents=True)
    return p


def test_missing_features_dir_raises_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError) as info:
        check_features(ProjectPaths(tmp_path))
    assert info.value.exit_code is ExitCode.NOT_FOUND


def test_empty(paths: ProjectPaths) -> None:
    text, code = check_features(paths)
    assert code is ExitCode.SUCCESS
    assert text.splitlines() == [
        f"Feature validation: {paths.root}",
        "Total files: 0",
        "Valid: 0",
        "Invalid: 0",
        "",
        NONE_FOUND,
    ]


def test_all_valid(paths: ProjectPaths) -> None:
    write(paths, "feature-1-a", feat("feature-1-a"))
    write(paths, "feature-2-b", feat("feature-2-b", dependencies=["feature-1-a"]))
    text, code = check_features(paths)
    assert code is ExitCode.SUCCESS
    assert "Total files: 2\nValid: 2\nInvalid: 0\n\n" + ALL_VALID + "\n" in text
    assert "Warnings" not in text


def test_invalid_files_sorted_with_every_error(paths: ProjectPaths) -> None:
    """AC-63/64: directory, relative path, one line per error naming the field."""
    write(paths, "z bad", {"id": "my-feature", "category": 5, "title": None,
                           "dependencies": ["feature-404-x"]})  # fmt: skip
    write(paths, "a ok", feat("feature-1-a"))
    write(paths, "b broken", '{\n  "id": "feature-2-b",\n  "category" "x"\n}')
    write(paths, "audit-sec-1-y", feat("audit-sec-1-x", auditSource="SEC"))
    text, code = check_features(paths)
    assert code is ExitCode.VALIDATION_ERROR
    assert "Total files: 4\nValid: 1\nInvalid: 3\n" in text
    assert ALL_VALID not in text
    body = text.split("Invalid files:\n", 1)[1].split("\nWarnings:\n")[0]
    assert body == (
        "\n"
        "  audit-sec-1-y\n"
        "    .automaker/features/audit-sec-1-y/feature.json\n"
        '    - id: a finding\'s id must equal its directory name "audit-sec-1-y"\n'
        "\n"
        "  b broken\n"
        "    .automaker/features/b broken/feature.json\n"
        "    - invalid JSON: Expecting ':' delimiter (line 3, column 14)\n"
        "\n"
        "  z bad\n"
        "    .automaker/features/z bad/feature.json\n"
        "    - category: must be a string (found number)\n"
        "    - description: missing (a string is required)\n"
    )


def test_one_malformed_among_ten_and_forward_dependencies(paths: ProjectPaths) -> None:
    """AC-65: the original reports every later file invalid; we report the bad one alone."""
    for i in range(10):
        fid = f"feature-{i}-x"
        write(paths, fid, feat(fid, dependencies=[f"feature-{(i + 1) % 10}-x"]))
    write(paths, "f 3 broken", "{]")
    text, code = check_features(paths)
    assert code is ExitCode.VALIDATION_ERROR
    assert "Total files: 11\nValid: 10\nInvalid: 1\n" in text
    assert text.count("    - ") == 1
    assert "f 3 broken/feature.json" in text
    assert "Warnings" not in text


def test_duplicate_ids_warn_without_changing_the_exit(paths: ProjectPaths) -> None:
    write(paths, "a", feat("feature-1-a"))
    write(paths, "b", feat("feature-1-a"))
    text, code = check_features(paths)
    assert code is ExitCode.SUCCESS
    assert (
        "Warnings:\n  id 'feature-1-a' is used by 2 files: "
        ".automaker/features/a/feature.json, .automaker/features/b/feature.json\n"
    ) in text
    assert text.endswith(ALL_VALID + "\n")


def test_findings_are_validated_too(paths: ProjectPaths) -> None:
    write(paths, "audit-dead-code-1736-x", feat("audit-dead-code-1736-x", auditSource="DEAD_CODE"))
    assert check_features(paths)[1] is ExitCode.SUCCESS


def test_what_automaker_accepts_is_valid_with_warnings(paths: ProjectPaths) -> None:
    """Issue 18: ids, statuses, empty text, priorities, unknown dependencies, folders."""
    write(paths, "user-authentication", {"id": "user-authentication", "category": "Auth",
                                         "description": "", "status": "pipeline_review"})
    write(paths, "elsewhere", feat("feature-2-b", status="shipped", priority=4,
                                   dependencies=["feature-404-x"]))
    write(paths, "group/nested", feat("feature-3-c"))
    text, code = check_features(paths)
    assert code is ExitCode.SUCCESS
    assert "Total files: 2\nValid: 2\nInvalid: 0\n" in text
    warnings = text.split("Warnings:\n", 1)[1]
    stray = ".automaker/features/group/nested/feature.json: not read by aidd or AutoMaker"
    assert stray in warnings
    for start in ("id: differs from its directory name", 'status: "shipped" means nothing',
                  "priority: 4 is outside 1-3", 'dependencies: unknown feature id "feature-404-x"',
                  "description: empty"):  # fmt: skip
        assert f"    - {start}" in warnings, start
    assert text.endswith(ALL_VALID + "\n")
