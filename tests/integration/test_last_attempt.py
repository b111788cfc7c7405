"""The last attempt through the real aidd (issue 32): an attempt killed as hung is named, with
the file it wrote and the end of its log, in the next prompt of the same work; a run after a
kill -9 of aidd names the attempt it was killed in."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import FakeAgent
from tests.integration.runs import READ, WIDE_LIMITS, RunAidd, events, log, prompt, started
from tests.integration.scenario import MakeScenario
from tests.reliability.harness import running
from tests.waiting import wait_for

ARGS = ("--max-iterations", "2", "--idle-nudge-timeout", "1", "--idle-timeout", "20",
        "--timeout", "40", "--max-nudges", "2")


def test_the_second_prompt_names_the_first_attempts_hung_kill(scenario: MakeScenario) -> None:
    hung = [{"init": True}, {"write_file": "src/cart.py", "text": "total = 0\n"},
            {"say": "working on the cart"}, *[{"echo_stdin": 1}] * 60, {"sleep": 60}]
    s = scenario("claude-code", hung, [{"init": True}, READ, {"say": "done"}, {"finish": True}],
                 args=ARGS).start().wait(timeout=90)
    assert s.code == 0, s.out + s.err
    assert [e["result"] for e in s.named("iteration_end")] == [71, 0]
    first = (s.iterations / "001.prompt.md").read_text()
    second = (s.iterations / "002.prompt.md").read_text()
    assert "did not succeed" not in first
    assert ("Attempt 001 ended with result 71: aidd killed it as hung: 2 nudges answered "
            "without any work.") in second, second[:3000]
    assert "Files it changed: src/cart.py." in second
    # its log's last lines: aidd's kill line, not the nudge text it repeats in the log
    assert "counts as hung (--max-nudges); killing the agent tree" in second
    assert "nudge: aidd has seen no output" not in second


def test_a_run_after_a_kill_9_names_the_attempt_it_was_killed_in(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
        tmp_path: Path) -> None:
    fake_agent.script([{"write_file": "src/half.py", "text": "def half(\n"}, {"line": "working"},
                       {"sleep": 60}],
                      [{"init": True}, READ, {"say": "reviewed"}, {"finish": True}])
    with started(env, tmp_path, "--project-dir", str(project), "--max-iterations", "1",
                 *WIDE_LIMITS) as first:
        wait_for(fake_agent.records, 20, "the first run's agent to start")
        wait_for((project / "src" / "half.py").exists, 20, "the agent's half-finished file")
        first.kill()  # SIGKILL: no run_end, the lock left behind
        first.wait(timeout=10)
    agent_pid = fake_agent.records()[0]["pid"]
    wait_for(lambda: not running(agent_pid), 10, "the agent's end with aidd")
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *WIDE_LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    (previous,) = events(project, "previous_run")
    assert (previous["ending"], previous["attempt"], previous["attempt_reason"],
            previous["checkpoint"], previous["cut_short"]) == ("killed", 1, None, "001", True)
    text = prompt(project, 2)
    assert (f"The previous run {previous['previous']} was killed during attempt 001 "
            "(onboarding); the project as it was before that attempt is checkpointed at "
            "001.") in text
    assert "Review the work it left half-finished" in text
    assert f"WARN The previous run {previous['previous']} was killed during attempt 001" in res.out
    assert f"[aidd] Previous run: {previous['previous']} was killed during attempt 001" in log(
        project, 2)


PLAN = {"todos": [{"content": "Add the cart total", "status": "completed"},
                  {"content": "Test the discount", "status": "in_progress"}]}
TOO_LONG = "Prompt is too long · the request is ~210000 tokens (limit 200000)"


def test_after_claudes_context_exhaustion_the_next_attempt_is_a_new_conversation_with_the_hand_off(
        scenario: MakeScenario) -> None:
    """Issue 32: claude's own exhaustion (its synthetic message and error result, as recorded
    in tests/fixtures/realcli/claude/context_overflow) is result 76; the next attempt does not
    resume that conversation and its prompt carries aidd's hand-off."""
    exhausted = [
        {"session": "exhausted-conversation"}, {"init": True}, READ,
        {"write_file": "src/cart.py", "text": "total = 0\n"},
        {"tool": {"name": "TodoWrite", "input": PLAN}},
        {"say": "The total works; the discount is next."},
        {"json": {"type": "assistant", "error": "invalid_request", "session_id": "x",
                  "message": {"id": "m9", "role": "assistant", "model": "<synthetic>",
                              "content": [{"type": "text", "text": TOO_LONG}]}}},
        {"result": {"subtype": "success", "is_error": True, "result": TOO_LONG,
                    "terminal_reason": "prompt_too_long"}},
        {"exit": 1}]
    s = scenario("claude-code", exhausted, [{"init": True}, READ, {"say": "done"},
                                            {"finish": True}], args=ARGS).start().wait(timeout=90)
    assert s.code == 0, s.out + s.err
    assert [(e["result"], e["reason"]) for e in s.named("iteration_end")] == [
        (76, "context_exhausted"), (0, "exit_status")]
    second = (s.iterations / "002.prompt.md").read_text()
    assert (f"Attempt 001 ended with result 76: its conversation ran out of context or turns: "
            f"{TOO_LONG}.") in second, second[:3000]
    assert "Files it changed: src/cart.py." in second
    assert "- [completed] Add the cart total\n- [in_progress] Test the discount" in second
    assert "Its last message:\n\n```\nThe total works; the discount is next.\n```" in second
    argv = [r["argv"] for r in s.fake.records()]
    assert len(argv) == 2
    assert not any("exhausted-conversation" in word or word in ("--resume", "--continue")
                   for word in argv[1])
