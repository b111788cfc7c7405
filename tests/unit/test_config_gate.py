"""The gate's settings from every layer: `--gate` (repeatable), `AIDD_GATE`, the user's config
and the project's, which may declare its checks but not replace the user's or wait longer."""

from __future__ import annotations

from pathlib import Path

import pytest

from aidd.config import Actions, load_settings
from aidd.errors import UsageError
from aidd.gate.commands import GateCommand
from aidd.options import BY_NAME, convert
from aidd.project.approvals import approve


def _settings(tmp_path: Path, flags: dict[str, object] | None = None, *, user: str = "",
              project: str = "", environ: dict[str, str] | None = None,
              approved: bool = True):  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    if user:
        (home / ".config" / "aidd").mkdir(parents=True, exist_ok=True)
        (home / ".config" / "aidd" / "config.yaml").write_text(user)
    root = tmp_path / "proj"
    (root / ".automaker").mkdir(parents=True, exist_ok=True)
    if project:
        (root / ".automaker" / "aidd.yaml").write_text(project)
        if approved:
            approve({"HOME": str(home)}, root / ".automaker" / "aidd.yaml", project.encode())
    return load_settings({"project-dir": root, **(flags or {})}, Actions(),
                         {"HOME": str(home), **(environ or {})}, cwd=tmp_path)


def test_the_flag_is_repeatable_and_each_value_one_command(tmp_path: Path) -> None:
    gate = convert(BY_NAME["gate"], ("pytest -q", "npm test"))
    assert _settings(tmp_path, {"gate": gate}).gate == (
        GateCommand("pytest -q", "pytest -q"), GateCommand("npm test", "npm test"))
    assert _settings(tmp_path).gate == ()


def test_environment_and_config_files(tmp_path: Path) -> None:
    assert _settings(tmp_path, environ={"AIDD_GATE": "make check"}).gate == (
        GateCommand("make check", "make check"),)
    assert _settings(tmp_path, environ={"AIDD_GATE": ""}).gate == ()
    user = "gate:\n  - name: unit\n    run: pytest -q --junitxml=r.xml\n    junit: r.xml\n"
    assert _settings(tmp_path / "a", user=user).gate == (
        GateCommand("unit", "pytest -q --junitxml=r.xml", 600, "r.xml"),)
    project = _settings(tmp_path / "b", project="gate: [npm test]\ngate-revert-passes: true\n")
    assert project.gate == (GateCommand("npm test", "npm test"),)
    assert project.gate_revert_passes


@pytest.mark.parametrize(("user", "project", "message"), [
    ("gate: [pytest -q]\n", "gate: ['true']\n", "key 'gate' replaces the gate of your own"),
    ("", "gate:\n  - {run: pytest, timeout: 601}\n", "'pytest' timeout 601s is over the 600s"),
    ("gate-revert-passes: true\n", "gate-revert-passes: false\n", "loosens the gate"),
    ("", "gate: [{run: x, junit: /etc/passwd}]\n", "'junit' must be a path inside the project"),
])
def test_the_project_file_cannot_weaken_the_gate(tmp_path: Path, user: str, project: str,
                                                 message: str) -> None:
    with pytest.raises(UsageError, match=message):
        _settings(tmp_path, user=user, project=project)
    if "junit" not in project:  # a path outside the project is never trusted
        trusted = _settings(tmp_path, user=user + "trust-project-config: true\n",
                            project=project)
        assert trusted.config_sources


def test_the_same_gate_in_both_files_is_no_conflict(tmp_path: Path) -> None:
    both = "gate: [pytest -q]\n"
    assert _settings(tmp_path, user=both, project=both).gate == (
        GateCommand("pytest -q", "pytest -q"),)


def test_a_project_gate_waits_for_the_users_approval_of_that_very_file(tmp_path: Path) -> None:
    """Issue 27 item 8: a cloned repository's gate never runs unapproved; `aidd --allow`
    approves the file as it is, and an edit makes it a proposal again."""
    project = "gate: [make check]\n"
    held = _settings(tmp_path, project=project, approved=False)
    assert held.gate == ()
    assert held.gate_unapproved == (GateCommand("make check", "make check"),)
    config = tmp_path / "proj" / ".automaker" / "aidd.yaml"
    assert str(config) in held.config_sources
    approve({"HOME": str(tmp_path / "home")}, config, project.encode())
    assert _settings(tmp_path, project=project, approved=False).gate == held.gate_unapproved
    edited = _settings(tmp_path, project=project + "gate-revert-passes: true\n", approved=False)
    assert edited.gate == ()
    assert edited.gate_unapproved == held.gate_unapproved
    assert edited.gate_revert_passes  # the rest of the file applies meanwhile


def test_trust_or_the_users_own_gate_needs_no_approval(tmp_path: Path) -> None:
    project = "gate: [make check]\n"
    trusted = _settings(tmp_path / "a", user="trust-project-config: true\n", project=project,
                        approved=False)
    assert trusted.gate == (GateCommand("make check", "make check"),)
    assert trusted.gate_unapproved == ()
    same = _settings(tmp_path / "b", user=project, project=project, approved=False)
    assert same.gate == trusted.gate
    assert same.gate_unapproved == ()
    flagged = _settings(tmp_path / "c", {"gate": convert(BY_NAME["gate"], ("pytest",))},
                        project=project, approved=False)
    assert flagged.gate == (GateCommand("pytest", "pytest"),)
    assert flagged.gate_unapproved == ()
