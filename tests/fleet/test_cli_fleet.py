"""`aidd fleet` is dispatched from cli only for `fleet`: other commands never import
temporalio, and without the extra `aidd fleet` says how to install it (exit 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aidd import cli
from tests.integration.runs import REPO


def _importtime(*args: str) -> str:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "aidd", *args],
                          capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
    return done.stderr


@pytest.mark.parametrize("args", [("--help",), ("--version",)])
def test_other_commands_never_import_temporalio(args: tuple[str, ...]) -> None:
    imported = _importtime(*args)
    assert "aidd.cli" in imported
    assert "temporalio" not in imported
    assert "aidd.fleet" not in imported


def test_without_the_extra_fleet_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "temporalio", None)  # as if not installed
    for name in [m for m in sys.modules if m.startswith("aidd.fleet")]:
        monkeypatch.delitem(sys.modules, name)
    assert cli.main(["fleet", "status"]) == 2
    assert capsys.readouterr().err == (
        "aidd: error: aidd fleet needs the fleet extra: pip install 'aidd[fleet]'\n")


def test_a_bad_fleet_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    pytest.importorskip("temporalio")
    bad = tmp_path / "fleet.yaml"
    bad.write_text("projects: {a: {path: x, key: nope}}\n")
    done = subprocess.run([sys.executable, "-m", "aidd", "fleet", "up", str(bad)],
                          capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr == f"aidd: error: {bad}: projects.a.key: unknown pool 'nope' (add it " \
                          "under pools)\n"


def test_fleet_help_lists_its_commands() -> None:
    pytest.importorskip("temporalio")
    done = subprocess.run([sys.executable, "-m", "aidd", "fleet", "--help"],
                          capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
    assert done.returncode == 0
    for command in ("up", "status", "stop", "worker", "report", "down"):
        assert f"  {command} " in done.stdout
