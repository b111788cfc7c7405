"""Each config layer judged on its own (loaded leniently), the copy lists, the gate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aidd.config import Actions, Settings, load_settings
from aidd.doctor.configcheck import check_config, check_copy_lists, check_gate
from aidd.doctor.findings import Status
from aidd.errors import ExitCode
from aidd.options import BY_NAME, convert
from aidd.project.paths import ProjectPaths


def settings(tmp_path: Path, env: dict[str, str] | None = None, **flags: Any) -> Settings:
    home = tmp_path / "home"
    environ = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
               "AIDD_HOME": str(tmp_path / "aidd-home"), "PATH": "/usr/bin:/bin", **(env or {})}
    given = {"project-dir": tmp_path / "proj", **{
        k.replace("_", "-"): convert(BY_NAME[k.replace("_", "-")], v) for k, v in flags.items()}}
    return load_settings(given, Actions(doctor=True), environ, cwd=tmp_path, lenient=True)


def by_name(tmp_path: Path, s: Settings) -> dict[str, Any]:
    return {f.name: f for f in check_config(s, ProjectPaths(tmp_path / "proj"))}


def test_no_config_anywhere_is_ok(tmp_path: Path) -> None:
    found = by_name(tmp_path, settings(tmp_path))
    assert [f.status for f in found.values()] == [Status.OK] * 3
    assert found["user config"].detail.startswith("none (")


def test_each_broken_layer_fails_with_2_and_the_others_still_count(tmp_path: Path) -> None:
    user = tmp_path / "home" / ".config" / "aidd" / "config.yaml"
    user.parent.mkdir(parents=True)
    user.write_text("timeout: soon\n")
    project = tmp_path / "proj" / ".automaker" / "aidd.yaml"
    project.parent.mkdir(parents=True)
    project.write_text("idle_timeout: 5\n")
    s = settings(tmp_path, {"AIDD_MAX_ITERATIONS": "many", "AIDD_TIMEOUT": "100"})
    found = by_name(tmp_path, s)
    assert found["user config"].code is ExitCode.INVALID_ARGS
    assert "'timeout'" in found["user config"].detail
    assert str(user) in found["user config"].fix
    assert found["project config"].status is Status.OK
    assert found["variables"].status is Status.FAIL
    assert "AIDD_MAX_ITERATIONS" in found["variables"].detail
    assert (s.timeout, s.idle_timeout) == (100, 5)  # the valid layers still apply


def test_a_project_config_loosening_supervision_fails(tmp_path: Path) -> None:
    project = tmp_path / "proj" / ".automaker" / "aidd.yaml"
    project.parent.mkdir(parents=True)
    project.write_text("keep-children: true\n")
    found = by_name(tmp_path, settings(tmp_path))
    assert found["project config"].status is Status.FAIL
    assert "keep-children" in found["project config"].detail


def test_gate_programs_found_or_not(tmp_path: Path) -> None:
    ok = settings(tmp_path, gate=["CI=1 sh -c true", "test -d .", {"name": "t", "run": "ls"}])
    assert check_gate(ok).status is Status.OK
    missing = check_gate(settings(tmp_path, gate=["no-such-tool-xyz --check", "ls"]))
    assert (missing.status, missing.code) == (Status.FAIL, ExitCode.INVALID_ARGS)
    assert "no-such-tool-xyz" in missing.detail
    assert check_gate(settings(tmp_path, gate=["./run-tests.sh"])).status is Status.FAIL
    script = tmp_path / "proj" / "run-tests.sh"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert check_gate(settings(tmp_path, gate=["./run-tests.sh"])).status is Status.OK


def test_copy_lists_bad_lines_warn(tmp_path: Path) -> None:
    s = settings(tmp_path)
    paths = ProjectPaths(tmp_path / "proj")
    paths.root.mkdir()
    home = tmp_path / "home"
    assert check_copy_lists(s, paths, home).detail == "none in use"
    (tmp_path / "aidd-home").mkdir()
    source = tmp_path / "shared"
    source.mkdir()
    (tmp_path / "aidd-home" / "copydirs.txt").write_text(f"{source} -> docs\n")
    assert check_copy_lists(s, paths, home).status is Status.OK
    (tmp_path / "aidd-home" / "copyfiles.txt").write_text(
        f"{tmp_path}/missing.txt\n{source} -> x\n")
    found = check_copy_lists(s, paths, home)
    assert found.status is Status.WARN
    assert "copyfiles.txt:1: source" in found.detail
    assert "(and 1 more)" in found.detail
