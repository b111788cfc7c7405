"""The nudge cap (issue 28 item 2): an agent that answers each nudge with a line of text and goes
quiet again is killed as hung after `--max-nudges` nudges (result 71), where before each answer
restarted the idle clock and the attempt ran to `--timeout`. Work (a tool call, a project file
change) between nudges starts the count again."""

from __future__ import annotations

import time
from pathlib import Path

from aidd.project.activity import FileActivity
from tests.conftest import FakeAgent
from tests.fakes.attempt import run_fake_attempt
from tests.integration.scenario import SLACK_S, MakeScenario, run_together

ANSWER = {"say": "I am looking into it."}  # a line of text, no tool call, no file touched
CAP_ARGS = ("--max-iterations", "1", "--idle-nudge-timeout", "1", "--idle-timeout", "20",
            "--timeout", "40", "--max-nudges", "2")
# Nudge 1 at ~1 s, its answer, nudge 2 at ~2 s, its answer, the kill at ~3 s (the kill grace
# aside: the fake dies on SIGTERM). Without the cap each answer restarts the idle clock, so the
# attempt runs to --timeout (40 s), far past this bound.
BOUND_S = 3 + 3 * SLACK_S


def test_text_only_answers_end_in_a_hung_kill_for_stdin_and_relaunch_clis(
        scenario: MakeScenario) -> None:
    started = {"mark": "started"}
    claude = scenario("claude-code", [{"init": True}, started, {"say": "working"},
                                      *[{"echo_stdin": 1}] * 60, {"sleep": 60}], args=CAP_ARGS)
    opencode = scenario("opencode",
                        [{"session": "ses_X"}, {"init": True}, started, {"say": "working"},
                         {"sleep": 60}],
                        [{"session": "ses_X"}, {"init": True}, ANSWER, {"sleep": 60}],
                        args=CAP_ARGS)
    run_together([claude, opencode], timeout=60)
    for s in (claude, opencode):
        (end,) = s.named("iteration_end")
        assert (end["result"], end["reason"]) == (71, "idle_timeout"), s.out[-2000:]
        assert [n["delivered"] for n in s.named("nudge")] == [True, True]
        (kill,) = [k for k in s.named("kill") if k["reason"] != "nudge"]
        assert (kill["reason"], kill["unanswered_nudges"]) == ("hung", 2)
        labels = [c["label"] for c in s.named("checkpoint")]
        assert "001-prekill" in labels  # what the agent did is kept before the kill, as for idle
        line = "2 nudges answered by no work (no tool call, no file change): the agent counts " \
               "as hung (--max-nudges); killing the agent tree"
        assert line in s.log()
        assert line in s.out
        assert s.since("started") < BOUND_S


def test_a_tool_call_answers_a_nudge(fake_agent: FakeAgent, tmp_path: Path) -> None:
    """Cap 1: without the tool call after the first answer, the second nudge due is the kill."""
    read = {"tool": {"name": "Read", "input": {"file_path": "README.md"}}}
    fake_agent.script([{"init": True}, {"echo_stdin": 1}, read, {"echo_stdin": 1}, read,
                       {"echo_stdin": 1}, {"result": {}}])
    run = run_fake_attempt(tmp_path, "claude-code", idle_nudge_s=0.5, idle_timeout_s=10,
                           max_nudges=1)
    assert (run.outcome.result, run.outcome.nudges) == (0, 3)
    assert [k for k in run.named("kill") if k["reason"] == "hung"] == []


def test_a_project_file_change_answers_a_nudge(fake_agent: FakeAgent, tmp_path: Path) -> None:
    """opencode prints a tool only once it finished: its file changes are the work aidd sees."""
    write = {"write_file": "notes.txt", "text": "progress\n"}
    fake_agent.script([{"session": "ses_X"}, {"init": True}, {"sleep": 60}],
                      [{"session": "ses_X"}, write, ANSWER, {"sleep": 60}],
                      [{"session": "ses_X"}, {"say": "done"}, {"finish": True}])
    project = tmp_path / "project"
    project.mkdir()
    files = FileActivity(project, time.monotonic)
    files.start()
    try:
        run = run_fake_attempt(tmp_path, "opencode", idle_nudge_s=1, idle_timeout_s=10,
                               kill_grace_s=0.3, max_nudges=1, file_activity=files.last_change)
    finally:
        files.close()
    assert (run.outcome.result, run.outcome.nudges) == (0, 2), run.text[-2000:]
    assert [k for k in run.named("kill") if k["reason"] == "hung"] == []
