"""The last attempt in the prompt (issue 32): after an attempt at some work fails, the next
prompt of that work says how it ended, the files it changed, the end of its log and what to do
differently; after a success, nothing. Rate-limited retries keep what was said."""

from __future__ import annotations

from pathlib import Path

from aidd.budget.prices import Cost
from aidd.errors import ExitCode
from aidd.gate.commands import parse_gate
from aidd.project.paths import ProjectPaths
from aidd.prompts.context import LastAttemptInfo
from aidd.prompts.render import PromptRenderer
from aidd.prompts.select import PromptKind, Selection
from aidd.run.circular import LINE_CHARS as ASIDE_CHARS
from aidd.run.circular import LISTED
from aidd.run.iteration import Attempt
from aidd.run.lastattempt import (
    LINE_CHARS,
    TAIL_LINES,
    AttemptMemory,
    summarise,
    transcript_tail,
    work_of,
)
from aidd.run.phases import Phase, PhaseKind
from aidd.run.previousrun import Ending, PreviousRun
from aidd.session.outcome import Outcome, Reason, SessionOutcome
from tests.fakes.gate import FakeGate, red
from tests.fakes.session import failure, no_work, rate_limited, success, wall_timeout
from tests.unit.prompts.conftest import make_context
from tests.unit.run.conftest import Loop

HEADING = "The last attempt at this work did not succeed"
PYTEST = parse_gate([{"name": "pytest", "run": "pytest -q --junitxml=report.xml",
                      "junit": "report.xml"}])


def _write(name: str):  # type: ignore[no-untyped-def]
    def edit(project: Path) -> None:
        (project / "src").mkdir(exist_ok=True)
        (project / "src" / name).write_text("x = 1\n")

    return edit


def test_a_hung_kill_reaches_the_next_prompt_and_a_success_clears_it(loop: Loop) -> None:
    hung = failure(ExitCode.IDLE_TIMEOUT, Reason.IDLE_TIMEOUT, killed="hung", nudges=2,
                   edit=_write("cart.py"))
    run = loop.run(hung, success(), success(), max_iterations=3)
    assert run.code == 0, run.console
    first, second, third = (r.prompt for r in run.session.requests)
    assert run.session.kinds == ["initializer"] * 3
    assert HEADING not in first
    assert ("Attempt 001 ended with result 71: aidd killed it as hung: 2 nudges answered "
            "without any work.") in second
    assert "Files it changed: src/cart.py" in second
    assert "fake agent: attempt 1\n" in second  # the end of its log
    assert "finished: result" not in second  # the trailer is aidd's, not the attempt's
    assert "This time: Work in short, visible steps" in second
    assert HEADING not in third  # attempt 002 succeeded


def test_a_success_the_gate_finds_red_names_the_failing_tests(loop: Loop) -> None:
    gate = FakeGate([{}, {"pytest": red("t::cart_total")}, {}])
    run = loop.run(success(), success(), success(), fake_gate=gate, gate=PYTEST,
                   max_iterations=3)
    assert run.code == 0, run.console
    second, third = (r.prompt for r in run.session.requests[1:])
    assert ("Attempt 001 ended with result 0: it finished, but the validation gate then had "
            "new failures: t::cart_total.") in second
    assert "It changed no file." in second
    assert HEADING not in third


def test_each_ending_in_words(loop: Loop) -> None:
    run = loop.run(wall_timeout(), no_work(), failure(ExitCode.PROVIDER_ERROR,
                                                      Reason.PROVIDER_ERROR,
                                                      message="overloaded ``` 529"),
                   failure(3), success(), max_iterations=5)
    prompts = [r.prompt for r in run.session.requests]
    assert "aidd stopped it at the attempt's time limit (--timeout)" in prompts[1]
    assert "it ended without a tool call and without changing a file (no work)" in prompts[2]
    assert "the model provider failed: overloaded ʼʼʼ 529." in prompts[3]
    assert "the CLI exited with status 3 (an error or a crash)" in prompts[4]


def test_a_rate_limited_retry_keeps_the_failure_it_follows(loop: Loop) -> None:
    run = loop.run(failure(), rate_limited(60), success(), max_iterations=2)
    assert run.code == 0, run.console
    assert [r.number for r in run.session.requests] == [1, 2, 3]
    for request in run.session.requests[1:]:
        assert "Attempt 001 ended with result 1" in request.prompt


def test_the_log_tail_is_cleaned_and_capped(tmp_path: Path) -> None:
    log = tmp_path / "001.log"
    agent = [f"step {n}" for n in range(40)]
    log.write_bytes(b"[aidd] --- header ---\n" + b'{"type":"tool_use"}\n'
                    + "\n".join(agent).encode() + b"\n\x1b[31mred\x1b[0m " + b"y" * 500
                    + b"\n\n[aidd 02:14:06]   nudge: aidd has seen no output from you\n"
                    + b"[aidd 02:14:07] WARN killing the agent tree\n"
                    + b"[aidd] --- end of iteration 1 (attempt 001) ---\n")
    tail = transcript_tail(tmp_path, log).splitlines()
    assert len(tail) == TAIL_LINES
    assert tail[-1] == "[aidd 02:14:07] WARN killing the agent tree"
    assert tail[-2] == "red " + "y" * (LINE_CHARS - 5) + "…"
    assert tail[0] == "step 27"


def test_a_log_planted_as_a_link_gives_no_tail(tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.write_text("password\n")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "001.log").symlink_to(outside)
    assert transcript_tail(tmp_path / "proj", tmp_path / "proj" / "001.log") == ""


def test_the_module_stays_within_its_documented_size(tmp_path: Path) -> None:
    """Every part at its cap, through the real template: docs/templates.md says 10,000
    characters."""
    log = tmp_path / "001.log"
    log.write_text("\n".join("z" * 1000 for _ in range(200)) + "\n")
    outcome = SessionOutcome(0, Outcome.SUCCESS, Reason.EXIT_STATUS, 0, 1.0, 10)
    attempt = Attempt(999, Selection(PromptKind.CODING, "x"), outcome, None,
                      Cost(None, False, None), tuple("p" * 500 + str(n) for n in range(100)))
    info = summarise(attempt, tuple("t" * 500 + str(n) for n in range(100)), tmp_path, log)
    assert info is not None
    info = info._replace(previous_run=PreviousRun(
        "20261120T010000Z-4242", Ending.MACHINE_DIED, None, 999999, "in-progress", None,
        "999999-prekill", "f" * 80).for_prompt(),
        set_aside=tuple(f"{n}" + "s" * (ASIDE_CHARS - 1) for n in range(LISTED)))
    paths = ProjectPaths(tmp_path)
    renderer = PromptRenderer.for_project(paths)
    plain = make_context(paths, PromptKind.CODING, "opencode")
    size = len(renderer.render("_common/last_attempt.md", plain._replace(last_attempt=info)))
    assert 8500 < size <= 10000


CLAUDE_PLAN = ('tool: TodoWrite (toolu_01abcdef…) {"todos":[{"content":"Add the cart total",'
               '"status":"completed","activeForm":"x"},{"content":"Test the discount",'
               '"status":"in_progress","activeForm":"y"}]}')


def test_context_exhaustion_hands_off_the_plan_the_last_message_and_the_files(
        loop: Loop) -> None:
    """Issue 32: after result 76 the next prompt carries aidd's hand-off instead of the log's
    last lines; the attempt after a success hears nothing."""
    exhausted = failure(ExitCode.CONTEXT_EXHAUSTED, Reason.CONTEXT_EXHAUSTED,
                        message="Prompt is too long", edit=_write("cart.py"), rendered=(
                            "assistant: an early message", CLAUDE_PLAN,
                            "assistant: The total works; next the discount.",
                            "  It lives in src/cart.py.", "result: toolu_01abc… ok"))
    run = loop.run(exhausted, success(), success(), max_iterations=3)
    assert run.code == 0, run.console
    second, third = (r.prompt for r in run.session.requests[1:])
    assert ("Attempt 001 ended with result 76: its conversation ran out of context or turns: "
            "Prompt is too long.") in second
    assert "Files it changed: src/cart.py" in second
    assert "- [completed] Add the cart total\n- [in_progress] Test the discount" in second
    assert "The total works; next the discount.\nIt lives in src/cart.py." in second
    assert "an early message" not in second
    assert "The last lines of its log" not in second
    assert "This time: This is a new conversation" in second
    assert HEADING not in third


def test_the_hand_off_stays_within_the_documented_size(tmp_path: Path) -> None:
    """At its caps the hand-off is no longer than the log tail it replaces (docs/templates.md)."""
    todos = ",".join(f'{{"content":"{"c" * 400}","status":"pending"}}' for _ in range(50))
    log = tmp_path / "001.log"
    log.write_text(f"» tool: todowrite {{\"todos\":[{todos}]}} [completed]\n"
                   f"» assistant: {'m' * 5000}\n" + "».  \n" * 3)
    outcome = SessionOutcome(76, Outcome.FAILURE, Reason.CONTEXT_EXHAUSTED, 1, 1.0, 10,
                             message="x" * 500)
    attempt = Attempt(999, Selection(PromptKind.CODING, "x"), outcome, None,
                      Cost(None, False, None), tuple("p" * 500 + str(n) for n in range(100)))
    info = summarise(attempt, (), tmp_path, log)
    assert info is not None
    assert info.handoff
    assert info.transcript == ""
    assert len(info.plan) <= 1600
    assert len(info.last_message) == 1500
    paths = ProjectPaths(tmp_path)
    renderer = PromptRenderer.for_project(paths)
    plain = make_context(paths, PromptKind.CODING, "opencode")
    size = len(renderer.render("_common/last_attempt.md", plain._replace(last_attempt=info)))
    assert size <= 8000


def test_the_memory_is_kept_per_feature_when_the_feature_is_known() -> None:
    """Issue 32: the previous attempt on the same feature, else at the same work."""
    phase, kind = Phase(PhaseKind.MAIN), PromptKind.CODING
    work = work_of(phase, kind)
    memory = AttemptMemory()
    cart = LastAttemptInfo(failed=True, number=1, ending="cart broke")
    login = LastAttemptInfo(failed=True, number=2, ending="login broke")
    memory.remember(work, "cart", cart)
    memory.remember(work, "login", login)
    assert memory.recall(phase, kind, "cart").number == 1
    assert memory.recall(phase, kind, "login").number == 2
    assert memory.recall(phase, kind, None).number == 2  # unknown: the newest at this work
    assert not memory.recall(phase, kind, "search").failed  # nothing on that feature yet
    memory.remember(work, "cart", None)  # a success on cart forgets it, and the work's
    assert not memory.recall(phase, kind, "cart").failed
    assert not memory.recall(phase, kind, None).failed
    assert memory.recall(phase, kind, "login").number == 2
