"""A new project: what counts as one, when it needs `--spec`, and what its first runs create
and keep (LAY-15, LAY-17, AC-9..11, AC-14..17, AC-23, AC-28, AC-84)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeAgent
from tests.integration.runs import LIMITS, OK, REPO, RunAidd, events, log, tree_snapshot

# The initializer run's agent: it finishes with reason "stop" and exits 0.
FINISHED: list[dict[str, Any]] = [{"say": "done"}, {"finish": "stop"}, {"exit": 0}]


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "spec.md"
    path.write_bytes(b"# Shop\nSell things.\n\xe2\x82\xac\n")
    return path


def test_new_project_gets_initializer_and_artifacts(run_aidd: RunAidd, env: dict[str, str],
                                                   fake_agent: FakeAgent, tmp_path: Path,
                                                   spec: Path) -> None:
    """AC-14, AC-15, AC-16, AC-23, AC-84."""
    fake_agent.script(FINISHED)
    project = tmp_path / "proj"
    res = run_aidd("--project-dir", str(project), "--spec", str(spec), "--max-iterations", "2",
                   *LIMITS, env=env)
    assert res.code == 0, res.err
    auto = project / ".automaker"
    assert (auto / "app_spec.txt").read_bytes() == spec.read_bytes()
    for name in ("CHANGELOG.md", "project_structure.md", "todo.md", "features"):
        assert (auto / name).exists(), name
    assert (project / ".gitignore").is_file()
    assert not (auto / "aidd.lock").exists()
    records = fake_agent.records()
    assert len(records) == 2
    prompts = sorted((auto / "iterations").glob("*.prompt.md"))
    assert [p.name for p in prompts] == ["001.prompt.md", "002.prompt.md"]
    for prompt in prompts:
        assert "Prompt: initializer" in prompt.with_suffix("").with_suffix(".log").read_text()
    names = [e["event"] for e in events(project)]
    assert names[0] == "run_start"
    assert names[-1] == "run_end"
    assert names.index("phase_start") < names.index("iteration_start") < names.index(
        "iteration_end") < names.index("phase_end")
    assert not (auto / "_common").exists()


def test_new_project_keeps_existing_files_and_stays_new(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path
) -> None:
    """AC-15, AC-16, AC-17, AC-28: scaffolding dotfiles appear but never overwrite; artifacts
    already in .automaker/ are kept; a second run without --spec is still an initializer run
    although scaffolding and opencode.json exist; the shipped todo.md lets --todo stop."""
    root = tmp_path / "proj"
    auto = root / ".automaker"
    auto.mkdir(parents=True)  # ignored by detection (LAY-15): still a new project
    (auto / "CHANGELOG.md").write_text("# my changelog\n")
    spec = tmp_path / "spec.md"
    spec.write_text("# Shop\n")
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(root), "--spec", str(spec), "--max-iterations", "1",
                   *LIMITS, env=env)
    assert res.code == 0, res.err
    assert (auto / "CHANGELOG.md").read_text() == "# my changelog\n"
    shipped = {p.name for p in (REPO / "scaffolding").iterdir()}
    assert {".gitignore", ".editorconfig"} <= shipped
    assert shipped <= {p.name for p in root.iterdir()}
    for name in shipped:
        assert (root / name).read_bytes() == (REPO / "scaffolding" / name).read_bytes()
    (root / ".gitignore").write_text("mine\n")  # the user's edit of a scaffolded file
    assert json.loads((root / "opencode.json").read_text())["permission"] == {"*": "allow"}
    assert (auto / "todo.md").read_bytes() == (REPO / "artifacts" / "todo.md").read_bytes()
    # a second run, without --spec: the recorded origin keeps it new
    res = run_aidd("--project-dir", str(root), "--max-iterations", "1", *LIMITS, env=env)
    assert res.code == 0, res.err
    assert "Prompt: initializer" in log(root, 2)
    assert (root / ".gitignore").read_text() == "mine\n"
    # the shipped todo.md has nothing to do: --todo ends without an agent
    res = run_aidd("--project-dir", str(root), "--todo", *LIMITS, env=env)
    assert res.code == 0, res.err
    assert len(fake_agent.records()) == 2
    assert [e["reason"] for e in events(root, "mode_done")] == ["no_actionable_todo"]


def test_only_ignored_entries_mean_a_new_project(run_aidd: RunAidd, env: dict[str, str],
                                                fake_agent: FakeAgent, tmp_path: Path) -> None:
    """AC-9: all six ignored top-level names, and no --spec: exit 2, nothing created."""
    root = tmp_path / "proj"
    for name in (".git", ".automaker", "node_modules", ".vscode", ".idea"):
        (root / name).mkdir(parents=True)
    (root / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    before = tree_snapshot(root)
    res = run_aidd("--project-dir", str(root), env=env)
    assert res.code == 2, res.err
    assert "--spec" in res.err
    assert tree_snapshot(root) == before
    assert fake_agent.records() == []


@pytest.mark.parametrize("layout", ["missing", "only-ignored"])
def test_new_project_without_spec_exits_2_and_creates_nothing(
    run_aidd: RunAidd, env: dict[str, str], tmp_path: Path, layout: str
) -> None:
    """AC-9."""
    project = tmp_path / "proj"
    if layout == "only-ignored":
        for name in (".git", "node_modules", ".vscode", ".idea"):
            (project / name).mkdir(parents=True)
    before = tree_snapshot(project)
    res = run_aidd("--project-dir", str(project), env=env)
    assert res.code == 2
    assert "--spec" in res.err
    assert tree_snapshot(project) == before
    assert project.exists() == (layout != "missing")


def test_spec_that_is_missing_or_a_directory_exits_3(run_aidd: RunAidd, env: dict[str, str],
                                                     tmp_path: Path) -> None:
    """AC-10."""
    project = tmp_path / "proj"
    for spec in (tmp_path / "nope.md", tmp_path):
        res = run_aidd("--project-dir", str(project), "--spec", str(spec), env=env)
        assert res.code == 3, res.err
        assert not project.exists()


@pytest.mark.parametrize("layout", ["audit-on-missing-dir", "app-spec-only", "hidden-file"])
def test_runs_that_need_no_spec(run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent,
                                tmp_path: Path, layout: str) -> None:
    """AC-11: an audit anywhere, a new project already holding app_spec.txt, and a directory
    whose only other entry is a dotfile all run without --spec."""
    root = tmp_path / "proj"
    args: tuple[str, ...] = ()
    kind = "onboarding"
    if layout == "audit-on-missing-dir":
        args, kind = ("--audit", "SECURITY"), "audit"
    elif layout == "app-spec-only":
        (root / ".automaker").mkdir(parents=True)
        (root / ".automaker" / "app_spec.txt").write_text("spec\n")
        kind = "initializer"
    else:
        root.mkdir()
        (root / ".env.example").write_text("A=1\n")
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(root), "--max-iterations", "1", *args, *LIMITS, env=env)
    assert res.code == 0, res.err
    assert len(fake_agent.records()) == 1
    assert f"Prompt: {kind}" in log(root)


def test_spec_on_an_existing_codebase_is_used_by_onboarding(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path,
        spec: Path) -> None:
    """Issue 28 item 5: a directory holding code is onboarded, and the --spec given is copied to
    app_spec.txt and named in the onboarding prompt as the owner's (it was ignored in silence)."""
    fake_agent.script(FINISHED)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "README.md").write_text("# An app that exists\n")
    res = run_aidd("--project-dir", str(project), "--spec", str(spec), "--max-iterations", "1",
                   *LIMITS, env=env)
    assert res.code == 0, res.err
    auto = project / ".automaker"
    assert (auto / "app_spec.txt").read_bytes() == spec.read_bytes()
    assert f"copied {spec} to .automaker/app_spec.txt" in res.out
    prompt = (auto / "iterations" / "001.prompt.md").read_text()
    assert "# Onboard an existing codebase" in prompt
    assert "the specification the project's owner gave" in prompt
    assert "**Write `.automaker/app_spec.txt`:**" not in prompt


def test_spec_differing_from_the_projects_app_spec_is_refused(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path,
        spec: Path) -> None:
    """Issue 28 item 5: an existing project keeps its own app_spec.txt; another --spec is one
    line and exit 2, with nothing written and no agent started."""
    project = tmp_path / "proj"
    (project / ".automaker").mkdir(parents=True)
    (project / "README.md").write_text("# An app that exists\n")
    (project / ".automaker" / "app_spec.txt").write_text("# Another product\n")
    before = tree_snapshot(project)
    res = run_aidd("--project-dir", str(project), "--spec", str(spec), *LIMITS, env=env)
    assert res.code == 2
    assert res.err == (f"aidd: error: --spec {spec} differs from the project's "
                       ".automaker/app_spec.txt, which a run of an existing project does not "
                       "replace: edit that file, or remove it to start from --spec\n")
    assert tree_snapshot(project) == before
    assert fake_agent.records() == []


def test_spec_in_an_audit_run_is_said_to_be_unused(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path,
        spec: Path) -> None:
    fake_agent.script(FINISHED)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "README.md").write_text("# An app that exists\n")
    res = run_aidd("--project-dir", str(project), "--spec", str(spec), "--audit", "SECURITY",
                   "--max-iterations", "1", *LIMITS, env=env)
    assert "--spec is not used by an audit run" in res.out + res.err
