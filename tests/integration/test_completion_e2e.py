"""Project completion through the real aidd: a pending completion, the review attempt, then
confirmed with 73, also with the shipped todo.md in place (CMP-1..20, AC-17, AC-59, AC-60)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.integration.runs import (
    LIMITS,
    OK,
    READ,
    REPO,
    RunAidd,
    complete_project,
    onboarded,
)

# The agent of a completion review: it reads the project, finishes with reason "stop" and
# exits 0.
FINISHED: list[dict[str, Any]] = [READ, {"say": "done"}, {"finish": "stop"}, {"exit": 0}]


def test_two_phase_completion_then_restart_exits_73(run_aidd: RunAidd, env: dict[str, str],
                                                    fake_agent: FakeAgent,
                                                    tmp_path: Path) -> None:
    """AC-59, AC-60: pending + review, then confirmed (73); a restart exits 73 at once."""
    fake_agent.script(FINISHED)
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    complete_project(project)
    res = run_aidd("--project-dir", str(project), *LIMITS, env=env)
    assert res.code == 73, res.err
    assert len(fake_agent.records()) == 1
    assert (project / ".automaker" / ".project_completed").is_file()
    assert not (project / ".automaker" / ".project_completion_pending").exists()
    log = (project / ".automaker" / "iterations" / "001.log").read_text()
    assert "completion review" in log
    res = run_aidd("--project-dir", str(project), *LIMITS, env=env)
    assert res.code == 73
    assert len(fake_agent.records()) == 1
    res = run_aidd("--project-dir", str(project), "--prompt", "add {{ x }} $HOME `id`",
                   "--max-iterations", "1", *LIMITS, env=env)
    assert res.code == 0, res.err
    assert len(fake_agent.records()) == 2
    prompt = (project / ".automaker" / "iterations" / "002.prompt.md").read_text()
    assert "add {{ x }} $HOME `id`" in prompt


def test_shipped_todo_does_not_block_completion(run_aidd: RunAidd, env: dict[str, str],
                                                fake_agent: FakeAgent, project: Path) -> None:
    """AC-17, AC-59: with the shipped todo.md in place, a passing project completes (73) and
    `.project_completed` holds an ISO-8601 time."""
    onboarded(project)
    feature(project, "feature-1-a", passes=True, status="completed")
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *LIMITS, env=env)
    assert (project / ".automaker" / "todo.md").read_bytes() == (
        REPO / "artifacts" / "todo.md").read_bytes()
    assert res.code == 0, res.err  # the review ran; --max-iterations 1 ended the phase
    assert (project / ".automaker" / ".project_completion_pending").is_file()
    res = run_aidd("--project-dir", str(project), *LIMITS, env=env)
    assert res.code == 73, res.err
    stamp = (project / ".automaker" / ".project_completed").read_text().strip()
    assert datetime.fromisoformat(stamp).tzinfo is not None
    assert len(fake_agent.records()) == 1
