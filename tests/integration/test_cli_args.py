"""Flags, config files and AIDD_* variables are validated before anything runs (CLI-1..36)."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

import aidd
from aidd import __version__
from aidd.errors import EXIT_MEANINGS
from aidd.options import OPTIONS
from tests.conftest import FakeAgent
from tests.integration.runs import REPO, RunAidd, tree_snapshot

# The flags of the spec's flag tables (cli.md, AC-3) with the default each one documents.
SPEC_DEFAULTS = [
    ("--project-dir", "`.`"), ("--spec", "–"), ("--cli", "`opencode`"),
    ("--model", "CLI default"), ("--init-model", "`--model`"), ("--code-model", "`--model`"),
    ("--audit-model", "code model"), ("--prompt", "–"), ("--todo", "off"),
    ("--validate", "off"), ("--in-progress", "off"), ("--stop-when-done", "on"),
    ("--audit", "–"), ("--audit-all", "–"), ("--audit-on-completion", "–"),
    ("--code-after-audit", "off"), ("--filter-by", "–"), ("--milestone", "–"),
    ("--feature", "–"), ("--max-iterations", "unlimited"), ("--timeout", "3600"),
    ("--idle-timeout", "900"), ("--idle-nudge-timeout", "300"), ("--quit-on-abort", "0 = never"),
    ("--continue-on-timeout", "off"), ("--keep-children", "off"), ("--rate-limit-buffer", "60"),
    ("--rate-limit-fallback", "300"), ("--no-clean", "off"), ("--extract-structured", "off"),
]
# How a documented default reads in the help text (a switch's "–" is "off").
HELP_DEFAULT = {"–": ("default: none", "default: off"), "CLI default": ("the CLI's own",),
                "`--model`": ("(default: --model)",), "code model": ("the code model",),
                "0 = never": ("default: 0;",)}


def test_version_and_help(run_aidd: RunAidd) -> None:
    res = run_aidd("--version")
    assert res.code == 0
    assert res.out.strip().startswith("aidd ")
    res = run_aidd("--help")
    assert res.code == 0
    for opt in OPTIONS:
        assert opt.flag in res.out, opt.flag
    for flag in ("--status", "--json", "--check-features", "--extract-batch", "--stop"):
        assert flag in res.out
    assert "[default: 3600; env AIDD_TIMEOUT]" in res.out.replace("\n", " ").replace("  ", " ") \
        or "AIDD_TIMEOUT" in res.out


def test_help_names_the_fleet_and_the_exit_codes(run_aidd: RunAidd) -> None:
    """Issue 28 item 9: --help points to aidd fleet and the exit codes; --help-exit-codes
    prints every code the README's table documents, with the same set of numbers."""
    text = " ".join(run_aidd("--help").out.split())
    assert "aidd fleet --help" in text
    assert "aidd --help-exit-codes" in text
    res = run_aidd("--help-exit-codes")
    assert res.code == 0
    printed = [int(line.split()[0]) for line in res.out.splitlines()]
    assert printed == sorted(EXIT_MEANINGS)
    readme = (REPO / "README.md").read_text()
    table = readme[readme.index("## Exit codes"):readme.index("## Documentation")]
    documented = {int(n) for row in re.findall(r"^\| ([0-9 /]+) \|", table, re.M)
                  for n in row.split("/")}
    assert documented == set(EXIT_MEANINGS)


def test_version_and_help_name_every_flag_with_its_default(run_aidd: RunAidd) -> None:
    """AC-3: `aidd <version>` exit 0; --help names every flag of cli.md with its default."""
    res = run_aidd("--version")
    assert (res.code, res.out.strip()) == (0, f"aidd {aidd.__version__}")
    res = run_aidd("--help")
    assert res.code == 0
    text = " ".join(res.out.split())
    for flag, default in SPEC_DEFAULTS:
        match = re.search(rf"(?<![\w-]){re.escape(flag)}[ /=].*?env AIDD_\w+\]", text)
        assert match, flag
        wants = HELP_DEFAULT.get(default, (f"default: {default.strip('`')};",))
        assert any(want in match.group(0) for want in wants), (flag, default, match.group(0))
        assert f"env AIDD_{flag[2:].upper().replace('-', '_')}" in match.group(0), flag


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--max-iterations", "abc"], "--max-iterations"),
        (["--max-iterations", "-1"], "--max-iterations"),
        (["--max-iterations", "2147483648"], "--max-iterations"),
        (["--timeout", "-5"], "--timeout"),
        (["--idle-timeout", "1.5"], "--idle-timeout"),
        (["--quit-on-abort", "x"], "--quit-on-abort"),
        (["--rate-limit-fallback", "0"], "--rate-limit-fallback"),
        (["--max-wall-time", "1h30"], "--max-wall-time"),
        (["--max-tokens", "1e6"], "--max-tokens"),
        (["--max-cost-usd", "$5"], "--max-cost-usd"),
        (["--daily-max-cost-usd", "-1"], "--daily-max-cost-usd"),
        (["--pace-at", "101"], "--pace-at"),
        (["--model", "a b"], "--model"),
        (["--code-model", "-x"], "--code-model"),
        (["--spec", "--todo"], "--spec"),
        (["--cli"], "--cli"),
        (["--cli", "foo"], "--cli"),
        (["--cli", "zrun"], "zrun"),
        (["--nope"], "--nope"),
        (["stray"], "stray"),
        (["--audit", ","], "--audit"),
        (["--audit", "A/B"], "--audit"),
        (["--feature", "../x"], "--feature"),
        (["--filter-by", "category"], "--filter"),
        (["--filter", "x"], "--filter"),
        (["--json"], "--json"),
        (["--code-after-audit"], "--code-after-audit"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(run_aidd: RunAidd, tmp_path: Path,
                                          args: list[str], flag: str) -> None:
    project = tmp_path / "proj"
    res = run_aidd("--project-dir", str(project), *args)
    assert res.code == 2, res.err
    assert flag in res.err
    assert len(res.err.strip().splitlines()) == 1, res.err
    assert not project.exists()


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--max-iterations", "abc"], "--max-iterations"),
        (["--max-iterations", "-1"], "--max-iterations"),
        (["--timeout", "-5"], "--timeout"),
        (["--idle-timeout", "1.5"], "--idle-timeout"),
        (["--quit-on-abort", "x"], "--quit-on-abort"),
        (["--model", "a b"], "--model"),
        (["--spec", "--todo"], "--spec"),
        (["--cli"], "--cli"),
        (["--filter-by", "nosuchfield", "--filter", "x"], "--filter-by"),
        (["--filter-by", "priority", "--filter", "high"], "--filter"),
    ],
)
def test_bad_values_exit_2_without_starting_the_agent(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
    args: list[str], flag: str
) -> None:
    """AC-4, AC-5: the agent is on PATH, yet never started; the project is untouched."""
    before = tree_snapshot(project)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *args, env=env)
    assert res.code == 2, res.err
    assert flag in res.err
    assert fake_agent.records() == []
    assert tree_snapshot(project) == before


def test_zrun_message(run_aidd: RunAidd) -> None:
    res = run_aidd("--cli", "zrun")
    assert "zrun is not supported by aidd" in res.err
    res = run_aidd("--cli", "foo")
    assert all(name in res.err for name in ("opencode", "kilocode", "claude-code"))


def test_project_dir_that_is_a_file(run_aidd: RunAidd, tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    res = run_aidd("--project-dir", str(target), "--spec", str(target))
    assert res.code == 2
    assert str(target) in res.err


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_unknown_key_in_project_config(run_aidd: RunAidd, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    cfg = _write(project / ".automaker" / "aidd.yaml", "idle-timeout: 5\nbogus: 1\n")
    before = tree_snapshot(project)
    res = run_aidd("--project-dir", str(project), "--status")
    assert res.code == 2
    assert str(cfg) in res.err
    assert "bogus" in res.err
    assert tree_snapshot(project) == before


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("- a\n- b\n", "mapping"),
        ("timeout: abc\n", "timeout"),
        ("max_iterations: -3\n", "max_iterations"),
        ("stop-when-done: maybe\n", "stop-when-done"),
        ("project-dir: /tmp\n", "project-dir"),
        ("status: true\n", "status"),
        ("timeout: [1\n", "YAML"),
    ],
)
def test_bad_project_config_values(run_aidd: RunAidd, tmp_path: Path, text: str,
                                   needle: str) -> None:
    project = tmp_path / "proj"
    cfg = _write(project / ".automaker" / "aidd.yaml", text)
    res = run_aidd("--project-dir", str(project), "--stop")
    assert res.code == 2, res.err
    assert str(cfg) in res.err
    assert needle in res.err
    assert not (project / ".automaker" / ".stop").exists()


def test_bad_environment_value(run_aidd: RunAidd, aidd_env: dict[str, str],
                               tmp_path: Path) -> None:
    res = run_aidd("--project-dir", str(tmp_path), "--stop",
                   env={**aidd_env, "AIDD_TIMEOUT": "abc"})
    assert res.code == 2
    assert "AIDD_TIMEOUT" in res.err


def test_user_config_bad_key(run_aidd: RunAidd, aidd_env: dict[str, str], tmp_path: Path) -> None:
    cfg = _write(Path(aidd_env["XDG_CONFIG_HOME"]) / "aidd" / "config.yaml", "colour: red\n")
    res = run_aidd("--project-dir", str(tmp_path), "--stop")
    assert res.code == 2
    assert str(cfg) in res.err
    assert "colour" in res.err


def test_stop_writes_iso_time_without_agent(run_aidd: RunAidd, aidd_env: dict[str, str],
                                            tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    env = {**aidd_env, "PATH": "/nonexistent"}
    res = run_aidd("--project-dir", str(project), "--stop", env=env)
    assert res.code == 0, res.err
    stamp = (project / ".automaker" / ".stop").read_text().strip()
    assert datetime.fromisoformat(stamp).tzinfo is not None
    assert not list((project / ".automaker").glob(".aidd-tmp-*"))


def test_stop_on_missing_project_exits_3(run_aidd: RunAidd, tmp_path: Path) -> None:
    res = run_aidd("--project-dir", str(tmp_path / "nope"), "--stop")
    assert res.code == 3
    assert not (tmp_path / "nope").exists()


def test_a_one_shot_says_which_flags_it_ignores_once(run_aidd: RunAidd, tmp_path: Path) -> None:
    """Issue 28: no flag ignored in silence. A second action and a run's setting given to a
    one-shot are each named once on stderr; the one-shot's own flags are not."""
    project = tmp_path / "proj"
    (project / ".automaker" / "features").mkdir(parents=True)
    res = run_aidd("--project-dir", str(project), "--status", "--checkpoints", "--timeout", "5",
                   "--cli", "claude-code", "--milestone", "m", "--color", "never")
    assert res.err.count("aidd: ignoring --checkpoints (only --status runs)\n") == 1, res.err
    assert res.err.count("aidd: ignoring --cli, --timeout: --status does not use them (a "
                         "run's settings)\n") == 1, res.err
    res = run_aidd("--project-dir", str(project), "--status", "--json")
    assert "ignoring" not in res.err


def test_version_alone_answers_before_the_cli_imports(tmp_path: Path) -> None:
    """issue 33: `aidd --version` under 100 ms: Click and the config are not imported, and
    the line is Click's own."""
    probe = ("import sys; from aidd.__main__ import main; main(); "
             "print(sorted(m for m in ('aidd.cli', 'click') if m in sys.modules))")
    for flag in ("--version", "-v"):
        fast = subprocess.run([sys.executable, "-c", probe, flag], capture_output=True,
                              text=True, check=True, cwd=tmp_path)
        assert fast.stdout == f"aidd {__version__}\n[]\n"
    slow = subprocess.run([sys.executable, "-c", "from aidd.cli import main; main()",
                           "--version"], capture_output=True, text=True, check=True,
                          cwd=tmp_path)
    assert slow.stdout == f"aidd {__version__}\n"
