"""The work modes `--todo`, `--in-progress` and `--validate`: when each starts the agent, and
when it ends its phase without one (CMP-30, AC-57, AC-58)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.integration.runs import LIMITS, OK, RunAidd, events, iterations, onboarded


def test_todo_with_only_closed_items_starts_nothing(run_aidd: RunAidd, env: dict[str, str],
                                                    fake_agent: FakeAgent, project: Path) -> None:
    """AC-57: only [x], [~] and [!] items: exit 0, no agent, no log."""
    todo = project / ".automaker" / "todo.md"
    todo.parent.mkdir()
    todo.write_text("# TODO\n- [x] done\n- [~] deferred\n- [!] blocked\n")
    res = run_aidd("--project-dir", str(project), "--todo", *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    assert fake_agent.records() == []
    assert not list(iterations(project).glob("*.log"))
    assert [e["reason"] for e in events(project, "mode_done")] == ["no_actionable_todo"]


def test_todo_mode_stops_once_the_agent_clears_the_list(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """CMP-30: after the attempt that ticks the last item, the phase ends without an agent."""
    todo = project / ".automaker" / "todo.md"
    todo.parent.mkdir()
    todo.write_text("# TODO List\n- [ ] fix the thing\n- [x] old\n")
    fake_agent.script([{"write_file": ".automaker/todo.md", "text": "- [x] fix the thing\n"},
                       *OK])
    res = run_aidd("--project-dir", str(project), "--todo", *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == 1
    done = events(project, "mode_done")
    assert [(e["kind"], e["reason"]) for e in done] == [("todo", "no_actionable_todo")]
    assert events(project, "phase_end")[-1]["reason"] == "mode_done"
    assert sorted(p.name for p in (project / ".automaker" / "iterations").glob("*.log")) == [
        "001.log"]


@pytest.mark.parametrize("stop_when_done", [True, False])
def test_todo_mode_with_nothing_to_do(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
    stop_when_done: bool
) -> None:
    """AC-57, AC-58: no todo.md: exit 0, no agent, no log; --no-stop-when-done runs it."""
    fake_agent.script(OK)
    flag = [] if stop_when_done else ["--no-stop-when-done"]
    res = run_aidd("--project-dir", str(project), "--todo", "--max-iterations", "1", *flag,
                   *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == (0 if stop_when_done else 1)
    logs = list((project / ".automaker" / "iterations").glob("*.log"))
    assert len(logs) == (0 if stop_when_done else 1)


def test_in_progress_mode_stops_when_no_feature_is_in_progress(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """CMP-30: the agent finishes the only in-progress feature; the next iteration ends the
    phase (another failing feature keeps the project from completing)."""
    feature(project, "feature-1-a", status="in_progress")
    feature(project, "feature-2-b")
    done = json.dumps({"id": "feature-1-a", "category": "Core", "description": "feature-1-a",
                       "status": "completed", "passes": True})
    fake_agent.script([{"write_file": ".automaker/features/feature-1-a/feature.json",
                        "text": done}, *OK])
    res = run_aidd("--project-dir", str(project), "--in-progress", *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == 1
    assert "Prompt: in-progress" in (project / ".automaker" / "iterations" / "001.log").read_text()
    done_events = events(project, "mode_done")
    assert [(e["kind"], e["reason"]) for e in done_events] == [("in-progress", "no_in_progress")]


@pytest.mark.parametrize(("flags", "attempts"), [
    (("--in-progress", "--filter-by", "category", "--filter", "Other"), 0),
    (("--in-progress", "--filter-by", "category", "--filter", "Other", "--no-stop-when-done",
      "--max-iterations", "1"), 1),
    (("--validate", "--max-iterations", "2"), 2),
    (("--max-iterations", "2"), 2),
])
def test_in_progress_validate_and_coding_counts(run_aidd: RunAidd, env: dict[str, str],
                                                fake_agent: FakeAgent, project: Path,
                                                flags: tuple[str, ...], attempts: int) -> None:
    """AC-58: no in_progress feature after the filter: exit 0 without the agent, unless
    --no-stop-when-done; --validate and coding run both attempts of --max-iterations 2."""
    onboarded(project)
    feature(project, "feature-1-a", status="in_progress")  # category Core: filtered out
    feature(project, "feature-2-b", category="Other")
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(project), *flags, *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == attempts
    assert len(list(iterations(project).glob("*.log"))) == attempts
    if attempts == 0:
        assert [e["reason"] for e in events(project, "mode_done")] == ["no_in_progress"]
