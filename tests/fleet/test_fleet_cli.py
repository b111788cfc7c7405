"""`aidd fleet` with the extra: a bad fleet file is one line, its help lists its commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.integration.runs import REPO


def test_a_bad_fleet_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "fleet.yaml"
    bad.write_text("projects: {a: {path: x, key: nope}}\n")
    done = subprocess.run([sys.executable, "-m", "aidd", "fleet", "up", str(bad)],
                          capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr == f"aidd: error: {bad}: projects.a.key: unknown pool 'nope' (add it " \
                          "under pools)\n"


def test_fleet_help_lists_its_commands() -> None:
    done = subprocess.run([sys.executable, "-m", "aidd", "fleet", "--help"],
                          capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
    assert done.returncode == 0
    for command in ("up", "status", "stop", "worker", "report", "down"):
        assert f"  {command} " in done.stdout
