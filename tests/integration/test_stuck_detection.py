"""Stuck detection: three attempts in a row that change nothing outside `.automaker/` end an
unlimited run, in git or not; a failed attempt leaves the count as it is; `--max-iterations`
turns it off (SUP-70..72, AC-55, AC-56)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.integration.runs import FAIL, LIMITS, OK, STOP, RunAidd, events

STUCK_LINE = "stopped: 3 consecutive iterations without meaningful changes"


def git_init(root: Path, env: dict[str, str]) -> None:
    for argv in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"]):
        subprocess.run(["git", *argv], cwd=root, env=env, check=True, capture_output=True)


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "no-git"])
@pytest.mark.parametrize("touch", ["nothing", "automaker"])
def test_three_unchanged_iterations_end_an_unlimited_run(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
    in_git: bool, touch: str
) -> None:
    """AC-55: nothing, or only .automaker/, changes: stuck after attempt 3, exit 0."""
    if in_git:
        git_init(project, env)
    steps = OK if touch == "nothing" else [
        {"write_file": ".automaker/notes.md", "text": "a note"}, *OK]
    fake_agent.script(steps, steps, steps, STOP)  # STOP: a guard that ends a run gone wrong
    res = run_aidd("--project-dir", str(project), *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == 3
    assert STUCK_LINE in res.out
    assert STUCK_LINE in (project / ".automaker" / "iterations" / "003.log").read_text()
    assert [e["iterations"] for e in events(project, "stuck")] == [[1, 2, 3]]
    assert events(project, "phase_end")[-1]["reason"] == "stuck"
    assert events(project, "run_end")[-1]["exit_code"] == 0


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "no-git"])
def test_an_agent_editing_the_same_file_each_time_is_never_stuck(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path, in_git: bool
) -> None:
    """AC-56: further edits to an already-modified (tracked) file are progress."""
    if in_git:
        git_init(project, env)
    edits = [[{"write_file": "README.md", "text": "existing code\n" + "more\n" * i}, *OK]
             for i in range(1, 6)]
    fake_agent.script(*edits, STOP)
    res = run_aidd("--project-dir", str(project), *LIMITS, env=env)
    assert res.code == 6, res.out + res.err  # ended by the guard, never by stuck detection
    assert len(fake_agent.records()) == 6
    assert events(project, "stuck") == []


def test_outside_git_changes_then_nothing_ends_after_attempt_7(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-56: a file changed in the first four attempts, then nothing: the run ends after 7."""
    edits = [[{"write_file": "src/app.txt", "text": f"version {i}\n"}, *OK] for i in range(4)]
    fake_agent.script(*edits, OK, OK, OK, STOP)
    res = run_aidd("--project-dir", str(project), *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == 7
    assert [e["iterations"] for e in events(project, "stuck")] == [[5, 6, 7]]


def test_a_failed_attempt_without_changes_leaves_the_stuck_count(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """SUP-71: success, failure, success, success (no changes): stuck after attempt 4."""
    git_init(project, env)
    fake_agent.script(OK, FAIL, OK, OK, STOP)
    res = run_aidd("--project-dir", str(project), *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == 4
    assert [e["iterations"] for e in events(project, "stuck")] == [[1, 3, 4]]


def test_no_stuck_detection_with_max_iterations(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-55: with --max-iterations set, unchanged iterations never end the run."""
    git_init(project, env)
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "4", *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == 4
    assert events(project, "stuck") == []
    assert events(project, "phase_end")[-1]["reason"] == "max_iterations"
    assert "main: --max-iterations 4 reached" in res.out
    assert "run ended (done): exit 0 after 4 iterations, 0 failed" in res.out
