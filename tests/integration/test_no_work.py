"""No work through the real aidd (issue 15): with each fake CLI, an attempt that exits 0 without
a tool call, without a change and with a few words is result 75 in `iteration_end` and the log
trailer, a failure `--quit-on-abort` turns into the exit code; a tool call or a changed file is
work; a completion review that did no work confirms nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeAgent
from tests.integration.runs import LIMITS, READ, RunAidd, complete_project, events, log
from tests.integration.scenario import CLIS, MakeScenario

IDLE: list[dict[str, Any]] = [{"init": True}, {"say": "Nothing to do."}, {"finish": True},
                              {"exit": 0}]
WROTE: list[dict[str, Any]] = [{"init": True}, {"write_file": "src/app.py", "text": "x = 1\n"},
                               {"say": "Wrote it."}, {"finish": True}, {"exit": 0}]


@pytest.mark.parametrize("cli", list(CLIS))
def test_exit_0_without_a_tool_call_or_a_change_is_result_75(scenario: MakeScenario,
                                                            cli: str) -> None:
    worked = [{"init": True}, READ, {"say": "Read it."}, {"finish": True}, {"exit": 0}]
    s = scenario(cli, worked, WROTE, IDLE,
                 args=("--max-iterations", "10", "--quit-on-abort", "2", *LIMITS)).start().wait()
    assert s.code == 75, s.out + s.err
    ends = s.named("iteration_end")
    assert [(e["result"], e["reason"], e["tool_calls"]) for e in ends] == [
        (0, "exit_status", 1), (0, "exit_status", 0), (75, "no_work", 0), (75, "no_work", 0)]
    assert ends[-1] == {**ends[-1], "outcome": "failure", "exit_status": 0,
                        "assistant_chars": len("Nothing to do.")}
    for name in ("003.log", "004.log"):
        text = s.log(name)
        assert ("no work: the agent exited 0 without a tool call or a change "
                "(14 characters of text)") in text
        assert "finished: result 75 (failure, no_work)" in text
    assert "2 consecutive failures (--quit-on-abort 2); exiting with 75" in s.out
    assert s.named("run_end")[0]["failures"] == 2


def test_a_completion_review_without_work_runs_again(run_aidd: RunAidd, env: dict[str, str],
                                                     fake_agent: FakeAgent,
                                                     tmp_path: Path) -> None:
    """The review says "done" and exits 0 without looking: not confirmed; the next review reads
    the project, and then completion is confirmed (73)."""
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    complete_project(project)
    fake_agent.script(IDLE, [READ, *IDLE])
    res = run_aidd("--project-dir", str(project), *LIMITS, env=env)
    assert res.code == 73, res.out + res.err
    assert [e["result"] for e in events(project, "iteration_end")] == [75, 0]
    assert ("the completion review did no work (result 75): completion not confirmed, "
            "reviewing again") in res.out
    assert "completion review" in log(project, 2)
    assert (project / ".automaker" / ".project_completed").is_file()
