"""The command line read without Click (issue 33): for every plain command line it gives what
Click gives, and it leaves every other one to Click."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aidd import cli
from aidd.options import Kind


def _given(values: dict[str, Any] | None) -> dict[str, Any]:
    """Click's values without the flags not given (None, () or False: what parse_args skips)."""
    assert values is not None
    return {k: v for k, v in values.items() if v not in (None, (), False)}


def _lines() -> list[list[str]]:
    """Each flag of the table alone (a value given twice where it takes one), then all of them
    in one command line, then the one-shots the benchmark times."""
    lines: list[list[str]] = [[]]
    every: list[str] = []
    for flag, (_, kind) in cli._PLAIN.items():
        if kind is Kind.SWITCH:
            lines += [[flag], [flag, flag]]
            every.append(flag)
        else:
            lines += [[flag, "a"], [flag, "a", flag, "b"], [flag, ""], [flag, "x y,z"]]
            every += [flag, "v"]
    lines.append(every)
    lines += [["--project-dir", "p", "--check-features"], ["--status", "--json", "--project-dir",
              "p", "--filter-by", "category", "--filter", "Core"]]
    return lines


@pytest.mark.parametrize("args", _lines(), ids=" ".join)
def test_a_plain_command_line_reads_as_click_reads_it(args: list[str]) -> None:
    assert cli._plain_values(args) == _given(cli._click_values(args))


def test_every_flag_but_help_and_version_is_read_plainly_by_clicks_name() -> None:
    """A flag added to the table, or an action, is read plainly too, under Click's name."""
    clicks = {flag: param.name for param in cli._command().params for flag in param.opts
              if flag.startswith("--") and flag not in ("--help", "--version", "--help-exit-codes")}
    assert {flag: name for flag, (name, _) in cli._PLAIN.items()} == clicks


@pytest.mark.parametrize("args", [
    ["--help"], ["-h"], ["--version"], ["-v"], ["--help-exit-codes"], ["--no-stop-when-done"],
    ["--project-dir=p"], ["--spec"], ["--spec", "--todo"], ["--spec", "-x"], ["word"],
    ["--status", "fleet"], ["--unknown"], ["--", "--status"], ["--statu"], ["-"],
], ids=" ".join)
def test_anything_else_is_left_to_click(args: list[str]) -> None:
    assert cli._plain_values(args) is None


def test_shell_completion_is_left_to_click(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_AIDD_COMPLETE", "bash_complete")
    assert cli._plain_values(["--status"]) is None


def test_a_plain_one_shot_never_imports_click(tmp_path: Path) -> None:
    (tmp_path / ".automaker" / "features").mkdir(parents=True)
    probe = ("import sys; from aidd.__main__ import main; code = main(); "
             "print('click' in sys.modules, code)")
    for flag in ("--check-features", "--status"):
        done = subprocess.run([sys.executable, "-c", probe, "--project-dir", str(tmp_path), flag],
                              capture_output=True, text=True, check=True, cwd=tmp_path)
        assert done.stdout.endswith("False 0\n"), done.stdout
