"""Which prompt a run sends and what it holds: onboarding until all three onboarding files
exist, `--prompt` before every mode, the shared partials inlined, and project overrides
(PRM-1..13, AC-18, AC-19, AC-23, AC-24)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.integration.runs import LIMITS, OK, REPO, RunAidd, iterations, log, onboarded, prompt


@pytest.mark.parametrize("missing", [None, "feature", "app_spec.txt", "CHANGELOG.md"])
def test_coding_needs_a_feature_set_and_a_spec(run_aidd: RunAidd, env: dict[str, str],
                                               fake_agent: FakeAgent, project: Path,
                                               missing: str | None) -> None:
    """AC-18 as issue 18 changes it: features/x/feature.json and app_spec.txt → coding, else
    onboarding; CHANGELOG.md is not needed (AutoMaker writes none)."""
    onboarded(project)
    path = feature(project, "feature-1-a", directory="x")
    if missing == "feature":
        path.unlink()
    elif missing is not None:
        (project / ".automaker" / missing).unlink()
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *LIMITS, env=env)
    assert res.code == 0, res.err
    kind = "coding" if missing in (None, "CHANGELOG.md") else "onboarding"
    assert f"Prompt: {kind}" in log(project)
    assert fake_agent.records()[0]["env"]["AIDD_PROMPT_KIND"] == kind


def test_prompt_text_beats_every_mode_and_arrives_verbatim(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-19: --prompt beats --audit, --todo, --validate, --in-progress; TEXT arrives as is;
    no directive.md is written."""
    text = "Add {{ x }} and {% raw %} to $HOME/`whoami` — 'quoted' \"too\""
    feature(project, "feature-1-a", status="in_progress")
    (project / ".automaker" / "todo.md").write_text("- [ ] a thing\n")
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(project), "--prompt", text, "--audit", "SECURITY",
                   "--todo", "--validate", "--in-progress", "--max-iterations", "1", *LIMITS,
                   env=env)
    assert res.code == 0, res.err
    (record,) = fake_agent.records()
    assert record["env"]["AIDD_PROMPT_KIND"] == "directive"
    sent = prompt(project)
    assert text in sent
    assert record["stdin_sha256"] == hashlib.sha256(sent.encode()).hexdigest()
    assert not list(project.rglob("directive.md"))


@pytest.mark.parametrize("cli", ["opencode", "claude-code"])
def test_prompt_file_holds_hard_constraints_and_cli_partial(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path, cli: str
) -> None:
    """AC-23: NNN.prompt.md is what the fake received and inlines _common/hard-constraints.md
    and _cli/<cli>.md (their static lines); no .automaker/_common/ appears."""
    fake_agent.script([{"init": True}, *OK])
    res = run_aidd("--project-dir", str(project), "--cli", cli, "--max-iterations", "1", *LIMITS,
                   env=env)
    assert res.code == 0, res.err
    sent = prompt(project)
    assert fake_agent.records()[0]["stdin_sha256"] == hashlib.sha256(sent.encode()).hexdigest()
    for part in ("_common/hard-constraints.md", f"_cli/{cli}.md"):
        static = [ln for ln in (REPO / "prompts" / part).read_text().splitlines()
                  if len(ln) > 30 and "{" not in ln]
        assert static, part
        assert all(ln in sent for ln in static), part
    assert not (project / ".automaker" / "_common").exists()


def test_prompt_overrides(run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent,
                          project: Path) -> None:
    """AC-24: an override including builtin/coding.md plus a line yields both; one using an
    undefined variable exits 1 naming file and variable before any agent starts."""
    onboarded(project)
    feature(project, "feature-1-a")
    fake_agent.script(OK)
    args = ("--project-dir", str(project), "--max-iterations", "1", *LIMITS)
    res = run_aidd(*args, env=env)
    assert res.code == 0, res.err
    plain = prompt(project, 1)
    builtin = [ln for ln in (REPO / "prompts" / "coding.md").read_text().splitlines()
               if len(ln) > 30 and "{" not in ln and ln in plain]
    assert len(builtin) > 5
    override = project / ".automaker" / "prompts" / "coding.md"
    override.parent.mkdir(parents=True)
    override.write_text('{% include "builtin/coding.md" %}\nOUR HOUSE RULE: tabs.\n')
    res = run_aidd(*args, env=env)
    assert res.code == 0, res.err
    sent = prompt(project, 2)
    assert "OUR HOUSE RULE: tabs." in sent
    assert "OUR HOUSE RULE" not in plain
    assert all(ln in sent for ln in builtin)
    override.write_text("Work on {{ no_such_variable }}.\n")
    res = run_aidd(*args, env=env)
    assert res.code == 1, res.err
    assert "coding.md" in res.err
    assert "no_such_variable" in res.err
    assert len(fake_agent.records()) == 2
    assert not (iterations(project) / "003.log").exists()
