"""docs/templates.md names every shipped template and exactly the variables the renderer gives."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from aidd.project.paths import ProjectPaths
from aidd.prompts.context import AuditInfo, InvalidFinding
from aidd.prompts.select import PromptKind
from tests.unit.prompts.conftest import ALL_FILTERS, make_context

REPO = Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "templates.md"


def _section(title: str) -> str:
    return DOC.read_text().split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _first_column(title: str) -> set[str]:
    return set(re.findall(r"^\| `([^`]+)` \|", _section(title), re.M))


def dotted(value: Any, prefix: str = "") -> dict[str, Any]:
    """Every variable path of a Jinja context: `a.b`, lists of objects as `a[].b`."""
    if isinstance(value, dict):
        out: dict[str, Any] = {prefix: value} if prefix else {}
        for key, item in value.items():
            out.update(dotted(item, f"{prefix}.{key}" if prefix else key))
        return out
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return {prefix: value, **dotted(value[0], f"{prefix}[]")}
    return {prefix: value}


def provided(project: ProjectPaths) -> set[str]:
    """Leaves of a context with everything set, plus the objects that may be none."""
    audit = AuditInfo(name="DEAD_CODE", kebab="dead-code", title="Dead code", category="Dead",
                      body="b", references=("SEVERITY_CLASSIFICATION",), report_path="r",
                      finding_prefix="audit-dead-code-",
                      invalid_findings=(InvalidFinding("p", ("e",)),))
    full = dotted(make_context(project, PromptKind.CODING, filters=ALL_FILTERS, audit=audit,
                               directive="d").to_dict())
    bare = dotted(make_context(project, PromptKind.CODING).to_dict())
    leaves = {path for path, value in full.items() if not isinstance(value, dict)}
    leaves -= {path for path, value in full.items()
               if isinstance(value, list) and value and isinstance(value[0], dict)}
    lists_of_objects = {path for path, value in full.items()
                        if isinstance(value, list) and value and isinstance(value[0], dict)}
    nullable = {path for path, value in bare.items() if value is None}
    return leaves | lists_of_objects | nullable


def test_every_variable_is_documented_and_nothing_else(project: ProjectPaths) -> None:
    variables = provided(project)
    assert {"aidd.version", "audit.invalid_findings[].errors", "filters.milestone",
            "nudge.silence"} <= variables  # the derivation itself works
    assert _first_column("Variables") == variables


def test_every_template_is_documented_and_exists() -> None:
    prompts = REPO / "prompts"
    shipped = {p.relative_to(prompts).as_posix() for p in prompts.rglob("*.md")
               if p.relative_to(prompts).parts[0] != "audits"}
    assert _first_column("Templates") == shipped
