"""Shell completion (README "Shell completion"): the flags, `fleet` and its commands, and the
values of --cli, --audit (each item of a comma list) and --liveness, as bash, zsh and fish ask
Click's `_AIDD_COMPLETE` for them (issue 28 item 9)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from tests.integration.runs import REPO


def _offered(line: str) -> list[str]:
    words = line.split()
    cword = len(words) if line.endswith(" ") else len(words) - 1
    env = {"PATH": "/usr/bin:/bin", "COMP_WORDS": line, "COMP_CWORD": str(cword),
           "_AIDD_COMPLETE": "bash_complete", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "aidd"], env=env, capture_output=True,
                          text=True, timeout=60, check=False, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return [line.partition(",")[2] for line in done.stdout.splitlines()]


@pytest.mark.parametrize(("line", "expected"), [
    ("aidd ", ["fleet", "watch", "feature"]),
    ("aidd w", ["watch"]),
    ("aidd --cli ", ["opencode", "kilocode", "claude-code"]),
    ("aidd --liveness ", ["signals", "output"]),
    ("aidd --color ", ["auto", "always", "never"]),
    ("aidd --audit SEC", ["SECURITY"]),
    ("aidd --audit SECURITY,ARCH", ["SECURITY,ARCHITECTURE"]),
])
def test_values_and_fleet_are_offered(line: str, expected: list[str]) -> None:
    assert _offered(line) == expected


def test_flags_are_offered() -> None:
    offered = _offered("aidd --max-")
    assert {"--max-iterations", "--max-cost-usd", "--max-tokens"} <= set(offered)


@pytest.mark.skipif(importlib.util.find_spec("temporalio") is None,
                    reason="the fleet extra is not installed")
def test_the_fleets_commands_are_offered() -> None:
    assert _offered("aidd fleet st") == ["status", "stop"]
    assert "--now" in _offered("aidd fleet stop --")


def test_a_stray_word_is_one_line_and_exit_2() -> None:
    done = subprocess.run([sys.executable, "-m", "aidd", "frobnicate"], capture_output=True,
                          text=True, timeout=60, check=False, cwd=REPO)
    assert done.returncode == 2
    assert done.stderr == ("aidd: error: unexpected argument 'frobnicate': aidd takes flags; "
                           "aidd fleet … runs many projects, aidd watch shows a run, aidd "
                           "feature edits a feature file\n")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_shell_gets_its_script(shell: str) -> None:
    done = subprocess.run([sys.executable, "-m", "aidd"], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "_AIDD_COMPLETE": f"{shell}_source",
                               "PYTHONPATH": str(REPO)}, timeout=60, check=False, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "_AIDD_COMPLETE" in done.stdout
    assert "aidd" in done.stdout
