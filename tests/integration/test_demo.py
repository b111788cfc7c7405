"""The README's demo command stays true: the run ends with a confirmed completion (aidd exits
73) and the demo itself exits 0, so the README's one-liner reads as success."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.integration.runs import REPO


def test_demo_runs_the_project_to_completion() -> None:
    done = subprocess.run([sys.executable, str(REPO / "tests" / "demo.py")], capture_output=True,
                          text=True, timeout=120, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "aidd exited with 73 (completed: the demo ended as intended)" in done.stdout
    prompts = re.findall(r"Prompt: (\w+)", done.stdout)
    assert prompts == ["initializer", "coding", "coding", "coding", "todo"], prompts
    assert "project completion confirmed" in done.stdout
    assert "Passing:" in done.stdout or "passing" in done.stdout.lower()
    assert "## Features: 3 became passing; 3 of 3 pass now (from the checkpoints)" in done.stdout
    kept = Path(re.findall(r"Scratch project kept at (.+)", done.stdout)[-1])
    try:
        _check_project(kept)
    finally:
        shutil.rmtree(kept.parent)


def _check_project(kept: Path) -> None:
    assert sorted(p.name for p in (kept / "src").iterdir()) == [
        "step1.txt", "step2.txt", "step3.txt"]
    assert (kept / ".automaker" / ".project_completed").is_file()
