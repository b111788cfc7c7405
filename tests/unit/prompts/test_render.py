"""Rendering: every shipped template under StrictUndefined, filters, overrides, errors."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from jinja2 import meta, nodes

from aidd.audits import definitions as audit
from aidd.errors import TemplateError
from aidd.project.paths import ProjectPaths
from aidd.prompts import context as pc
from aidd.prompts.context import (
    FilterInfo,
    GateInfo,
    InvalidFinding,
    LastAttemptInfo,
    PromptContext,
)
from aidd.prompts.render import PromptRenderer
from aidd.prompts.select import PromptKind
from aidd.resources import data_dir
from tests.unit.prompts.conftest import ALL_FILTERS, CLIS, NOW, make_context

GATE_REPORT = ("Command `pytest -q` (pytest) exited 1.\nNewly failing tests (1):\n"
               "- tests/test_cart.py::test_total")
LAST = LastAttemptInfo(
    failed=True, number=4, result=71, ending="aidd killed it as hung: 2 nudges answered without "
    "any work", files=("src/cart.py", "tests/test_cart.py"), more_files=3,
    transcript="» Bash: npm test -- --watch\n[aidd 02:14:07] killing the agent tree",
    advice="Work in short, visible steps.",
    previous_run="The previous run was killed during attempt 012.")
VARIANTS = ("plain", "filters", "remediation", "completion_review", "gate_red", "last_attempt")
REQUIRED_MODULES = (
    "hard-constraints",
    "assistant-rules-loading",
    "project-overrides",
    "error-handling-patterns",
    "wrap-up",
)
# PRM-20: the only variables a template may use, with their fields.
ALLOWED = {
    "aidd": {"version"},
    "project": {"dir", "name"},
    "cli": {"name", "display_name"},
    "kind": set(),
    "iteration": {"number", "index", "max"},
    "phase": {"name", "cycle"},
    "paths": {
        "spec",
        "features",
        "changelog",
        "todo",
        "project_structure",
        "project_md",
        "audit_reports",
    },
    "filters": {"active", "milestone", "feature", "field"},
    "directive": set(),
    "user_spec": set(),  # paths.spec is the user's --spec (issue 28 item 5; docs/templates.md)
    "completion_review": set(),
    "remediation": set(),
    "audit": {
        "name",
        "kebab",
        "title",
        "category",
        "body",
        "references",
        "report_path",
        "finding_prefix",
        "invalid_findings",
    },
    "severity": set(),
    "now": {"iso", "unix", "date"},
    "nudge": {"silence"},
    "gate": {"red", "report"},
    "last_attempt": {"failed", "number", "result", "ending", "files", "more_files",
                     "transcript", "advice", "previous_run", "handoff", "plan",
                     "last_message", "set_aside"},
    "parallel": {"feature", "feature_id", "others"},  # --parallel N (issue 29)
}


def _context(project: ProjectPaths, kind: PromptKind, cli: str, variant: str) -> PromptContext:
    ctx = make_context(project, kind, cli, directive="Ship the cart page.")
    if kind is PromptKind.AUDIT:
        definition = audit.load_audit("SECURITY", project)
        invalid = (InvalidFinding(".automaker/features/audit-security-1-x/feature.json", ("id",)),)
        ctx = ctx._replace(
            audit=audit.audit_info(definition, project, NOW, invalid),
            severity=audit.severity_reference(project),
        )
    if variant == "filters":
        ctx = ctx._replace(filters=ALL_FILTERS)
    if variant == "gate_red":
        ctx = ctx._replace(gate=GateInfo(True, GATE_REPORT))
    if variant == "last_attempt":
        ctx = ctx._replace(last_attempt=LAST)
    return ctx._replace(
        remediation=variant == "remediation",
        completion_review=variant == "completion_review",
    )


@pytest.mark.parametrize(
    ("kind", "cli", "variant"), list(itertools.product(PromptKind, CLIS, VARIANTS))
)
def test_every_kind_renders_strictly(
    project: ProjectPaths, kind: PromptKind, cli: str, variant: str
) -> None:
    renderer = PromptRenderer.for_project(project)
    ctx = _context(project, kind, cli, variant)
    text = renderer.render_prompt(ctx)
    # the CLI partial and the hard constraints are inlined (PRM-10, PRM-11, AC-23)
    assert renderer.render(f"_cli/{cli}.md", ctx).strip() in text
    for module in REQUIRED_MODULES:
        assert renderer.render(f"_common/{module}.md", ctx).strip() in text
    assert "{{" not in text
    assert "{%" not in text
    assert "\n\n\n" not in text
    assert text.endswith("\n")


@pytest.mark.parametrize("kind", [PromptKind.CODING, PromptKind.IN_PROGRESS, PromptKind.TODO])
def test_a_red_gate_reaches_the_coding_and_review_prompts(project: ProjectPaths,
                                                         kind: PromptKind) -> None:
    renderer = PromptRenderer.for_project(project)
    ctx = make_context(project, kind, "opencode")
    green = renderer.render_prompt(ctx)
    red = renderer.render_prompt(ctx._replace(gate=GateInfo(True, GATE_REPORT)))
    assert "validation gate is red" not in green
    assert "validation gate is red" in red
    assert GATE_REPORT in red
    review = ctx._replace(completion_review=True, gate=GateInfo(True, GATE_REPORT))
    assert GATE_REPORT in renderer.render_prompt(review)


@pytest.mark.parametrize("kind", list(PromptKind))
def test_the_last_failed_attempt_reaches_every_kind(project: ProjectPaths,
                                                    kind: PromptKind) -> None:
    renderer = PromptRenderer.for_project(project)
    ctx = make_context(project, kind, "claude-code")
    after_success = renderer.render_prompt(ctx)
    text = renderer.render_prompt(ctx._replace(last_attempt=LAST))
    assert "last attempt" not in after_success
    assert "previous run" not in after_success
    assert ("Attempt 004 ended with result 71: aidd killed it as hung: 2 nudges answered "
            "without any work.") in text
    assert "Files it changed: src/cart.py, tests/test_cart.py and 3 more." in text
    assert "```\n» Bash: npm test -- --watch\n[aidd 02:14:07] killing the agent tree\n```" in text
    assert "This time: Work in short, visible steps." in text
    assert "The previous run was killed during attempt 012. Review the work" in text
    # before the kind's own instructions, after the CLI partial
    assert text.index("did not succeed") < text.index(after_success.splitlines()[-1])


def test_the_previous_run_alone_renders_without_an_attempt(project: ProjectPaths) -> None:
    renderer = PromptRenderer.for_project(project)
    ctx = make_context(project, PromptKind.CODING, "opencode")
    text = renderer.render_prompt(ctx._replace(last_attempt=LastAttemptInfo(
        previous_run="The previous run was killed.")))
    assert "The previous run was killed. Review the work" in text
    assert "did not succeed" not in text


@pytest.mark.parametrize("kind", list(PromptKind))
def test_filter_preamble_only_for_filtered_kinds(project: ProjectPaths, kind: PromptKind) -> None:
    renderer = PromptRenderer.for_project(project)
    text = renderer.render_prompt(_context(project, kind, "opencode", "filters"))
    if kind.takes_filter_preamble:
        assert text.startswith('## Scope: milestone "mvp"')
        milestone = text.index("## Scope: milestone")
        feature = text.index("## Scope: one feature")
        field = text.index("## Scope: features with `category`")
        assert milestone < feature < field < text.index("## Running unattended")
        assert "`.automaker/features/feature-1-login/`" in text
        assert "--feature cart" in text
    else:
        assert "## Scope:" not in text
        assert text.startswith("## Running unattended in OpenCode")


def test_each_filter_section_alone(project: ProjectPaths) -> None:
    renderer = PromptRenderer.for_project(project)
    base = make_context(project, PromptKind.CODING)
    only_field = base._replace(filters=FilterInfo(field=ALL_FILTERS.field))
    text = renderer.render_prompt(only_field)
    assert text.startswith("## Scope: features with `category`")
    assert "## Scope: milestone" not in text
    assert "## Scope: one feature" not in text
    assert not renderer.render_prompt(base).startswith("## Scope")


def test_directive_reaches_the_agent_verbatim(project: ProjectPaths) -> None:
    directive = "Use {{ x }} and {% if y %}z{% endif %} with $HOME, `rm -rf build` and \\n.\nLine 2"
    ctx = make_context(project, PromptKind.DIRECTIVE, directive=directive)
    text = PromptRenderer.for_project(project).render_prompt(ctx)
    assert f"<directive>\n{directive}\n</directive>" in text


def test_remediation_and_review_branches_differ(project: ProjectPaths) -> None:
    renderer = PromptRenderer.for_project(project)
    coding = make_context(project, PromptKind.CODING)
    assert "# Fix the audit findings" in renderer.render_prompt(coding._replace(remediation=True))
    assert "# Implement the next feature" in renderer.render_prompt(coding)
    todo = make_context(project, PromptKind.TODO)
    assert "# Completion review" in renderer.render_prompt(todo._replace(completion_review=True))
    assert "# Work through the TODO list" in renderer.render_prompt(todo)


def test_nudge_names_the_silence(project: ProjectPaths) -> None:
    ctx = make_context(project, PromptKind.CODING).with_nudge(300)
    text = PromptRenderer.for_project(project).render_nudge(ctx)
    assert "300 seconds" in text
    assert "- [!]" in text
    assert ".automaker/todo.md" in text


@pytest.mark.parametrize("cli", CLIS)
def test_compile_all_covers_the_shipped_set(project: ProjectPaths, cli: str) -> None:
    renderer = PromptRenderer.for_project(project)
    compiled = renderer.compile_all(cli, sample=make_context(project, PromptKind.CODING, cli))
    assert {k.template for k in PromptKind} <= set(compiled)
    assert f"_cli/{cli}.md" in compiled
    assert "_common/wrap-up.md" in compiled
    assert "builtin/coding.md" in compiled  # in-progress extends it


def test_compile_all_parses_each_template_once(project: ProjectPaths,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 33: the parse that compiles a template also tells what it includes (parsing
    twice was a quarter of a run's start); a missing include is still named."""
    renderer = PromptRenderer.for_project(project)
    parsed: list[str | None] = []
    real = renderer.env._parse  # what `parse` and `compile` of a source both call

    def spy(source: str, name: str | None, filename: str | None) -> nodes.Template:
        parsed.append(name)
        return real(source, name, filename)

    monkeypatch.setattr(renderer.env, "_parse", spy)
    compiled = renderer.compile_all("opencode")
    assert sorted(parsed) == sorted(compiled)
    override = project.prompt_overrides / "coding.md"
    override.parent.mkdir(parents=True, exist_ok=True)
    override.write_text("{% include 'no-such.md' %}\n")
    with pytest.raises(TemplateError, match="template not found: no-such.md, "
                                            r"\.automaker/prompts/coding\.md:1"):
        PromptRenderer.for_project(project).compile_all("opencode")


def _templates() -> list[str]:
    root = data_dir("prompts")
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*.md")
        if p.relative_to(root).parts[0] != "audits"
    )


@pytest.mark.parametrize("name", _templates())
def test_templates_use_only_prm20_variables(name: str) -> None:
    renderer = PromptRenderer()
    source = (data_dir("prompts") / name).read_text()
    tree = renderer.env.parse(source)
    assert meta.find_undeclared_variables(tree) <= set(ALLOWED)
    for node in tree.find_all(nodes.Getattr):
        if isinstance(node.node, nodes.Name) and node.node.name in ALLOWED:
            assert node.attr in ALLOWED[node.node.name], f"{node.node.name}.{node.attr}"


def test_context_provides_exactly_prm20(project: ProjectPaths) -> None:
    data = make_context(project, PromptKind.CODING).to_dict()
    assert set(data) == set(ALLOWED)
    for key, fields in ALLOWED.items():
        if fields:
            assert set(data[key]) == fields, key


# -- overrides (PRM-12, AC-24) -----------------------------------------------------------------


def _override(project: ProjectPaths, name: str, text: str) -> Path:
    path = project.prompt_overrides / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_override_can_include_the_builtin(project: ProjectPaths) -> None:
    _override(project, "coding.md", '{% include "builtin/coding.md" %}\nALSO: keep it small.\n')
    renderer = PromptRenderer.for_project(project)
    ctx = make_context(project, PromptKind.CODING)
    text = renderer.render_prompt(ctx)
    assert renderer.render("builtin/coding.md", ctx) in text
    assert text.endswith("ALSO: keep it small.\n")
    assert renderer.overridden_files() == (".automaker/prompts/coding.md",)


def test_override_of_a_module_reaches_every_kind(project: ProjectPaths) -> None:
    _override(project, "_common/hard-constraints.md", "## House rules\n\nNo Fridays.\n")
    renderer = PromptRenderer.for_project(project)
    for kind in PromptKind:
        text = renderer.render_prompt(make_context(project, kind))
        assert "No Fridays." in text
        assert "## Hard constraints" not in text


def test_override_can_extend_the_builtin_and_replace_a_block(project: ProjectPaths) -> None:
    _override(
        project,
        "coding.md",
        '{% extends "builtin/coding.md" %}{% block heading %}# Our own heading\n{% endblock %}',
    )
    text = PromptRenderer.for_project(project).render_prompt(
        make_context(project, PromptKind.CODING)
    )
    assert "# Our own heading" in text
    assert "# Implement the next feature" not in text
    assert "## Finishing the iteration" in text


def test_a_render_looks_again_at_an_override_only(project: ProjectPaths,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: each render stat'ed every template it used (16 for a prompt) to see if it
    changed; aidd's own are the run's, so only an override is looked at, and an edit of one
    still reaches the next prompt."""
    house = _override(project, "_common/hard-constraints.md", "## House rules\n\nNo Fridays.\n")
    renderer = PromptRenderer.for_project(project)
    ctx = make_context(project, PromptKind.CODING)
    assert "No Fridays." in renderer.render_prompt(ctx)
    house.write_text("## House rules\n\nNo Mondays.\n")
    os.utime(house, ns=(10**9, 10**9))
    looked: list[Path] = []
    stat = Path.stat
    monkeypatch.setattr(Path, "stat", lambda self, **kw: looked.append(self) or stat(self, **kw))
    assert "No Mondays." in renderer.render_prompt(ctx)
    assert set(looked) == {house}


def test_each_record_type_of_a_context_is_looked_at_once(project: ProjectPaths,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: turning a context into Jinja's mapping asked each record what it was (two a
    prompt, ~60 values each); a type's fields are found once, the mapping is the same."""
    ctx = make_context(project, PromptKind.CODING)
    first = ctx.to_dict()
    asked: list[object] = []
    fields = pc.fields
    monkeypatch.setattr(pc, "fields", lambda record: asked.append(record) or fields(record))
    assert ctx._replace(directive="d").to_dict() == {**first, "directive": "d"}
    assert asked == []


def test_new_audits_are_listed_as_overrides(project: ProjectPaths) -> None:
    _override(project, "audits/CUSTOM.md", "---\ntitle: c\n---\n")
    renderer = PromptRenderer.for_project(project)
    assert renderer.overridden_files() == (".automaker/prompts/audits/CUSTOM.md",)
    renderer.compile_all("opencode")  # audit definitions are data, never compiled


def test_undefined_variable_names_file_line_and_variable(project: ProjectPaths) -> None:
    _override(project, "coding.md", "first line\n{{ audit.nme }}\n")
    renderer = PromptRenderer.for_project(project)
    renderer.compile_all("claude-code")  # syntax is fine
    with pytest.raises(TemplateError) as err:
        renderer.render_prompt(make_context(project, PromptKind.CODING))
    assert "'audit.nme' is undefined" in err.value.message
    assert ".automaker/prompts/coding.md:2" in err.value.message
    assert err.value.exit_code == 1


def test_sample_render_catches_undefined_variables_at_startup(project: ProjectPaths) -> None:
    _override(project, "_common/wrap-up.md", "Done.\n{{ bogus }}\n")
    renderer = PromptRenderer.for_project(project)
    with pytest.raises(TemplateError, match=r"'bogus' is undefined.*_common/wrap-up\.md:2"):
        renderer.compile_all("opencode", sample=make_context(project, PromptKind.TODO))


def test_syntax_error_names_file_and_line(project: ProjectPaths) -> None:
    _override(project, "_common/wrap-up.md", "fine\nstill fine\n{% if %}\n")
    with pytest.raises(
        TemplateError, match=r"syntax error.*\.automaker/prompts/_common/wrap-up\.md:3"
    ):
        PromptRenderer.for_project(project).compile_all("opencode")


def test_missing_include_is_found_at_compile_time(project: ProjectPaths) -> None:
    _override(project, "todo.md", 'x\n{% include "_common/nope.md" %}\n')
    with pytest.raises(
        TemplateError, match=r"not found: _common/nope\.md, \.automaker/prompts/todo\.md:2"
    ):
        PromptRenderer.for_project(project).compile_all("opencode")


def test_self_include_is_an_error_not_a_crash(project: ProjectPaths) -> None:
    _override(project, "coding.md", '{% include "coding.md" %}\n')
    with pytest.raises(TemplateError, match="endlessly"):
        PromptRenderer.for_project(project).render_prompt(make_context(project, PromptKind.CODING))


def test_names_outside_the_tree_are_refused(project: ProjectPaths) -> None:
    renderer = PromptRenderer.for_project(project)
    with pytest.raises(TemplateError, match="not found"):
        renderer.render("../secrets.md", make_context(project, PromptKind.CODING))


def test_builtin_error_is_reported_as_builtin(tmp_path: Path, project: ProjectPaths) -> None:
    builtin = tmp_path / "shipped"
    (builtin / "_cli").mkdir(parents=True)
    (builtin / "coding.md").write_text("ok\n{{ nudge.loud }}\n")
    renderer = PromptRenderer.for_project(project, builtin=builtin)
    with pytest.raises(TemplateError, match=r"'nudge.loud' is undefined, builtin/coding\.md:2"):
        renderer.render_prompt(make_context(project, PromptKind.CODING))


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("kind", list(PromptKind))
def test_prompts_teach_only_the_status_rule_and_millisecond_ids(project: ProjectPaths,
                                                                kind: PromptKind) -> None:
    """Issue 31 items 1 and 6: no prompt says `passes` makes a started feature done, and new
    ids carry milliseconds as AutoMaker writes them (it sorts by that number)."""
    text = _flat(PromptRenderer.for_project(project).render_prompt(make_context(project, kind)))
    assert "passes: true` while `in_progress`" not in text
    assert "unix seconds>-<slug>`," not in text
    if "## Feature files" in text:
        assert "`feature-<unix milliseconds>-<slug>`" in text
        assert "only when it has no status at all, `passes: true`" in text
        assert "`aidd feature done <id>` once it is verified" in text  # issue 31 item 7


def test_validate_never_approves_for_a_person(project: ProjectPaths) -> None:
    """Issue 31 item 5: `waiting_approval` needs a human, `pipeline_*` belongs to the pipeline;
    the old "set verified on any `passes: true`" instruction is gone."""
    text = _flat(PromptRenderer.for_project(project).render_prompt(
        make_context(project, PromptKind.VALIDATE)))
    assert "with another status than `verified`: set" not in text
    assert ("Never change a feature whose status is `waiting_approval` (a person approves it), "
            "`pipeline_<step>` (the pipeline owns it)") in text
