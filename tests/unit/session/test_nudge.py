"""The idle nudge against a scripted attempt: what it sends, says and records (ADP-30..32)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from aidd.agents.base import ErrorKind, ErrorSignal, Signals
from aidd.agents.registry import ADAPTERS
from aidd.errors import AgentCliError
from aidd.events import EventLog
from aidd.session.nudge import Nudger


@dataclass
class FakeAttempt:
    """Records what the nudge did to it; each step succeeds unless told otherwise."""

    signals: Signals = field(default_factory=Signals)
    stdin_open: bool = True
    listed: str | None = None  # what asking the CLI for the conversation finds
    held: bool | None = None  # what its export says: does the conversation hold the prompt?
    interrupted_meanwhile: bool = False
    relaunch_error: str | None = None
    said: list[str] = field(default_factory=list)
    stdin: list[bytes] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)

    def say(self, text: str, level: str = "") -> None:
        self.said.append(f"{level}:{text}" if level else text)

    def write_stdin(self, data: bytes) -> bool:
        if self.stdin_open:
            self.stdin.append(data)
        return self.stdin_open

    def ask_conversation(self) -> str | None:
        self.steps.append("ask")
        return self.listed

    def holds_task(self, conversation: str) -> bool | None:
        self.steps.append(f"export {conversation}")
        return self.held

    def interrupt_agent(self) -> bool:
        self.steps.append("interrupt")
        self.signals.note_error(ErrorSignal(ErrorKind.FATAL, "interrupted by SIGINT"))
        return not self.interrupted_meanwhile

    def relaunch(self, conversation: str | None, message: bytes) -> None:
        if self.relaunch_error:
            raise AgentCliError(self.relaunch_error)
        self.steps.append(f"relaunch {conversation} {message.decode()}")
        self.signals.conversation_id = None  # a new process has printed nothing yet


class RecordedEvents(EventLog):
    """The events a nudge emits, kept in memory instead of events.jsonl."""

    def __init__(self) -> None:
        super().__init__(Path("events.jsonl"), "run-1")
        self.emitted: list[dict[str, Any]] = []

    def emit(self, event: str, **fields: Any) -> None:
        self.emitted.append({"event": event, **fields})


def nudger(cli: str) -> tuple[Nudger, RecordedEvents]:
    events = RecordedEvents()
    return Nudger(ADAPTERS[cli], "keep going\nplease", events, number=3,
                  prompt="THE TASK\n"), events


def test_a_stdin_nudge_is_typed_and_awaits_its_answer() -> None:
    nudge, events = nudger("claude-code")
    agent = FakeAttempt()
    nudge.nudge(agent, 12.0)
    assert len(agent.stdin) == 1
    assert b"THE TASK" not in agent.stdin[0]  # claude read the prompt from stdin first
    assert agent.said == [
        "no output for 12s; nudge sent (stdin) alone: the prompt is ahead of it on stdin",
        "  nudge: keep going", "  nudge: please"]
    (event,) = events.emitted
    assert event == {"event": "nudge", "number": 3, "silence_s": 12.0, "method": "stdin",
                     "delivered": True, "why_not": None, "state": None, "with_task": False,
                     "task_check": "stdin", "conversation": None}
    assert nudge.count == 1
    assert not nudge.is_answer(progressed=False)  # the echo of the interrupt
    assert nudge.is_answer(progressed=True)
    assert nudge.is_answer(progressed=False)  # answered: any output is activity again
    assert nudge.answered_turn()  # the turn answering the nudge keeps stdin open
    assert not nudge.answered_turn()


def test_a_stdin_nudge_on_closed_stdin_is_not_delivered() -> None:
    nudge, events = nudger("claude-code")
    agent = FakeAttempt(stdin_open=False)
    nudge.nudge(agent, 0.5)
    assert agent.said == ["WARN:no output for 0.5s; nudge not delivered: stdin is closed"]
    assert events.emitted[0]["why_not"] == "stdin is closed"
    assert nudge.is_answer(progressed=False)
    assert not nudge.answered_turn()


def test_a_relaunch_nudge_resumes_the_conversation_and_forgets_the_interruption() -> None:
    nudge, events = nudger("opencode")
    agent = FakeAttempt()
    agent.signals.conversation_id = "ses_1"
    nudge.nudge(agent, 30.0)
    # The id came with the model's first answer: the CLI is not asked, the nudge goes alone.
    assert agent.steps == ["interrupt", "relaunch ses_1 keep going\nplease"]
    assert agent.signals.error is None  # the SIGINT's error is aidd's doing
    assert agent.said[:2] == [
        "interrupting the agent to nudge it (no output for 30s)",
        "no output for 30s; nudge sent (relaunch) alone: conversation ses_1 holds the task"]
    assert agent.said[-1] == "  resuming conversation ses_1"
    (event,) = events.emitted
    assert (event["delivered"], event["with_task"], event["task_check"],
            event["conversation"]) == (True, False, "output", "ses_1")


WITH_TASK = "THE TASK\n\nkeep going\nplease"


@pytest.mark.parametrize(("agent", "steps", "check", "why"), [
    pytest.param(FakeAttempt(), ["interrupt", "ask", f"relaunch None {WITH_TASK}"], "none",
                 "with the original task: the agent had started no conversation yet",
                 id="no-conversation"),
    pytest.param(FakeAttempt(listed="ses_2", held=False),
                 ["interrupt", "ask", "export ses_2", f"relaunch ses_2 {WITH_TASK}"], "export",
                 "with the original task: conversation ses_2 did not hold it yet",
                 id="conversation-without-the-prompt"),
    pytest.param(FakeAttempt(listed="ses_2", held=None),
                 ["interrupt", "ask", "export ses_2", f"relaunch ses_2 {WITH_TASK}"], "unknown",
                 "with the original task: the CLI could not tell whether conversation ses_2 "
                 "held it", id="export-cannot-tell"),
])
def test_a_nudge_before_the_conversation_holds_the_task_carries_the_task(
        agent: FakeAttempt, steps: list[str], check: str, why: str) -> None:
    """Issue 17: asked once the agent is stopped; the prompt goes again, then the nudge."""
    nudge, events = nudger("kilocode")
    nudge.nudge(agent, 1.0)
    assert agent.steps == steps
    assert f"no output for 1s; nudge sent (relaunch) {why}" in agent.said
    (event,) = events.emitted
    assert (event["delivered"], event["with_task"], event["task_check"]) == (True, True, check)


def test_an_exhausted_conversation_is_never_resumed() -> None:
    """Issue 32: out of context or turns, the conversation cannot take one more message; the
    relaunch starts a new one with the task, even when the conversation id is known."""
    nudge, events = nudger("opencode")
    agent = FakeAttempt(listed="ses_2", held=True)
    agent.signals.conversation_id = "ses_1"
    agent.signals.note_error(ErrorSignal(ErrorKind.CONTEXT, "maximum context length"))
    nudge.nudge(agent, 5.0)
    assert agent.steps == ["interrupt", f"relaunch None {WITH_TASK}"]
    assert agent.said[-1] == "  starting a new conversation"
    assert (events.emitted[0]["with_task"], events.emitted[0]["conversation"]) == (True, None)


def test_a_listed_conversation_holding_the_prompt_gets_the_nudge_alone() -> None:
    nudge, events = nudger("opencode")
    agent = FakeAttempt(listed="ses_2", held=True)
    nudge.nudge(agent, 5.0)
    assert agent.steps == ["interrupt", "ask", "export ses_2", "relaunch ses_2 keep going\nplease"]
    assert events.emitted[0]["task_check"] == "export"
    assert events.emitted[0]["with_task"] is False


def test_the_next_nudge_asks_about_the_conversation_the_last_relaunch_went_on() -> None:
    """The relaunched CLI printed nothing either: its conversation is the one aidd resumed,
    which may still lack the prompt (it was interrupted before storing it)."""
    nudge, _ = nudger("kilocode")
    agent = FakeAttempt(listed="ses_2", held=False)
    nudge.nudge(agent, 1.0)
    agent.steps.clear()
    agent.listed, agent.held = "ses_other", True
    nudge.nudge(agent, 1.0)
    assert agent.steps == ["interrupt", "export ses_2", "relaunch ses_2 keep going\nplease"]


def test_after_a_new_conversation_the_next_nudge_lists_again() -> None:
    nudge, _ = nudger("kilocode")
    agent = FakeAttempt()
    nudge.nudge(agent, 1.0)
    agent.steps.clear()
    nudge.nudge(agent, 1.0)
    assert agent.steps == ["interrupt", "ask", f"relaunch None {WITH_TASK}"]


@pytest.mark.parametrize(("agent", "why_not", "check"), [
    pytest.param(FakeAttempt(listed="ses_2", interrupted_meanwhile=True),
                 "aidd was interrupted", None, id="interrupted"),
    pytest.param(FakeAttempt(listed="ses_2", held=True, relaunch_error="cannot start opencode"),
                 "cannot start opencode", "export", id="cannot-start"),
])
def test_a_relaunch_nudge_that_cannot_be_delivered_says_why(
        agent: FakeAttempt, why_not: str, check: str | None) -> None:
    nudge, events = nudger("opencode")
    nudge.nudge(agent, 30.0)
    assert agent.steps[0] == "interrupt"  # first: the conversation cannot change meanwhile
    assert agent.said[-1] == f"WARN:no output for 30s; nudge not delivered: {why_not}"
    (event,) = events.emitted
    assert (event["delivered"], event["why_not"], event["with_task"], event["task_check"]) == (
        False, why_not, None, check)


def test_only_a_tool_call_or_a_file_change_is_work() -> None:
    """Issue 28: text answers nothing; a new tool call or a newer file change does."""
    nudge, _ = nudger("claude-code")
    assert nudge.worked(0, None) is False
    assert nudge.worked(0, None) is False  # text only: the counts did not move
    assert nudge.worked(1, None) is True
    assert nudge.worked(1, None) is False
    assert nudge.worked(1, 12.5) is True  # a file changed
    assert nudge.worked(1, 12.5) is False  # the same change, seen again
    assert nudge.worked(2, 13.0) is True
