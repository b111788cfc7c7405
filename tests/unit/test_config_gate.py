"""The gate's settings from every layer: `--gate` (repeatable), `AIDD_GATE`, the user's config
and the project's, which may declare its checks but not replace the user's or wait longer."""

from __future__ import annotations

from pathlib import Path

import pytest

from aidd.config import Actions, load_settings
from aidd.errors import UsageError
from aidd.gate.commands import GateCommand
from aidd.options import BY_NAME, convert


def _settings(tmp_path: Path, flags: dict[str, object] | None = None, *, user: str = "",
              project: str = "", environ: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    if user:
        (home / ".config" / "aidd").mkdir(parents=True, exist_ok=True)
        (home / ".config" / "aidd" / "config.yaml").write_text(user)
    root = tmp_path / "proj"
    (root / ".automaker").mkdir(parents=True, exist_ok=True)
    if project:
        (root / ".automaker" / "aidd.yaml").write_text(project)
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
