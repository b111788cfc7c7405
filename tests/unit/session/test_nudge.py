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

    def interrupt_agent(self) -> bool:
        self.steps.append("interrupt")
        self.signals.note_error(ErrorSignal(ErrorKind.FATAL, "interrupted by SIGINT"))
        return not self.interrupted_meanwhile

    def relaunch(self, conversation: str, message: bytes) -> None:
        if self.relaunch_error:
            raise AgentCliError(self.relaunch_error)
        self.steps.append(f"relaunch {conversation} {message!r}")


class RecordedEvents(EventLog):
    """The events a nudge emits, kept in memory instead of events.jsonl."""

    def __init__(self) -> None:
        super().__init__(Path("events.jsonl"), "run-1")
        self.emitted: list[dict[str, Any]] = []

    def emit(self, event: str, **fields: Any) -> None:
        self.emitted.append({"event": event, **fields})


def nudger(cli: str) -> tuple[Nudger, RecordedEvents]:
    events = RecordedEvents()
    return Nudger(ADAPTERS[cli], "keep going\nplease", events, number=3), events


def test_a_stdin_nudge_is_typed_and_awaits_its_answer() -> None:
    nudge, events = nudger("claude-code")
    agent = FakeAttempt()
    nudge.nudge(agent, 12.0)
    assert len(agent.stdin) == 1
    assert agent.said == ["no output for 12s; nudge sent (stdin)", "  nudge: keep going",
                          "  nudge: please"]
    (event,) = events.emitted
    assert (event["event"], event["number"], event["method"], event["delivered"]) == (
        "nudge", 3, "stdin", True)
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
    assert agent.steps[0] == "interrupt"  # the id came from the output: the CLI is not asked
    assert agent.steps[1].startswith("relaunch ses_1 ")
    assert agent.signals.error is None  # the SIGINT's error is aidd's doing
    assert "  interrupting the agent to resume conversation ses_1" in agent.said
    assert events.emitted[0]["delivered"] is True


@pytest.mark.parametrize(("agent", "why_not"), [
    pytest.param(FakeAttempt(), "no conversation id yet", id="no-id"),
    pytest.param(FakeAttempt(listed="ses_2", interrupted_meanwhile=True),
                 "aidd was interrupted", id="interrupted"),
    pytest.param(FakeAttempt(listed="ses_2", relaunch_error="cannot start opencode"),
                 "cannot start opencode", id="cannot-start"),
])
def test_a_relaunch_nudge_that_cannot_be_delivered_says_why(
        agent: FakeAttempt, why_not: str) -> None:
    nudge, events = nudger("opencode")
    nudge.nudge(agent, 30.0)
    assert agent.steps[0] == "ask"  # no id in the output: the CLI's own list
    assert agent.said[-1] == f"WARN:no output for 30s; nudge not delivered: {why_not}"
    assert (events.emitted[0]["delivered"], events.emitted[0]["why_not"]) == (False, why_not)
