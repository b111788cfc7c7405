"""The idle nudge (ADP-30..32): a message to an agent that went quiet. claude reads it on its
stdin; opencode and kilo read no stdin once started, so they are interrupted and their
conversation is resumed with the nudge as the next message."""

from __future__ import annotations

from typing import Protocol

from aidd.agents.base import Adapter, NudgeMethod, Signals
from aidd.errors import AgentCliError
from aidd.events import EventLog
from aidd.session.idle import seconds_text


class Nudged(Protocol):
    """The attempt being nudged, as a nudge needs it."""

    @property
    def signals(self) -> Signals: ...

    def write_stdin(self, data: bytes) -> bool:
        """Queue `data` for the agent's stdin; False when stdin is closed."""
        ...

    def say(self, text: str, level: str = "") -> None: ...

    def ask_conversation(self) -> str | None:
        """The conversation id, from the CLI itself (a run hung on its first request printed
        none)."""
        ...

    def interrupt_agent(self) -> bool:
        """Interrupt the agent, let it exit, kill what is left; False when aidd itself was
        interrupted meanwhile (its tree is killed next)."""
        ...

    def relaunch(self, conversation: str, message: bytes) -> None:
        """Start the CLI again on `conversation` with `message` as its input; AgentCliError when
        it cannot start."""
        ...


class Nudger:
    """Delivers the nudges of one attempt, and remembers what its output handling must know
    of them."""

    def __init__(self, adapter: Adapter, text: str, events: EventLog, number: int) -> None:
        self.adapter = adapter
        self.text = text
        self.events = events
        self.number = number
        self.count = 0
        self._outstanding = False  # a stdin nudge whose answering turn has not ended
        self._awaiting_answer = False  # a stdin nudge sent, no progress seen since
        self._state = ""  # the liveness state the nudge being sent was sent in, as shown

    def nudge(self, agent: Nudged, silence: float, state: str = "") -> None:
        """Nudge `agent` after `silence` seconds without output, in liveness `state` (issue 17;
        '' when only output is watched); say and record whether the nudge got through."""
        self.count += 1
        self._state = f" [{state}]" if state else ""
        method = self.adapter.nudge_method
        if method is NudgeMethod.STDIN:
            why_not = self._stdin(agent, silence)
        else:
            why_not = self._relaunch(agent, silence)
        if why_not is not None:
            agent.say(f"no output for {seconds_text(silence)}; nudge not delivered: {why_not}"
                      f"{self._state}", "WARN")
        self.events.emit("nudge", number=self.number, silence_s=round(silence, 3),
                         method=method.value, delivered=why_not is None, why_not=why_not,
                         state=state.partition(":")[0] or None)

    def is_answer(self, progressed: bool) -> bool:
        """Does new output count as activity? After a stdin nudge, claude's echo of the
        interrupt is not an answer (SUP-20): only output showing progress is."""
        if progressed:
            self._awaiting_answer = False
        return not self._awaiting_answer

    def answered_turn(self) -> bool:
        """A turn ended: was it the one answering a stdin nudge? (Its stdin stays open then.)"""
        answered, self._outstanding = self._outstanding, False
        return answered

    def _sent(self, agent: Nudged, silence: float, method: str) -> None:
        agent.say(f"no output for {seconds_text(silence)}; nudge sent ({method}){self._state}")
        for line in self.text.splitlines() or [""]:
            agent.say(f"  nudge: {line}")

    def _stdin(self, agent: Nudged, silence: float) -> str | None:
        if not agent.write_stdin(self.adapter.encode_nudge(self.text)):
            return "stdin is closed"
        self._outstanding = True
        self._awaiting_answer = True
        self._sent(agent, silence, "stdin")
        return None

    def _relaunch(self, agent: Nudged, silence: float) -> str | None:
        """Interrupt, then resume the same conversation with the nudge as the next message."""
        signals = agent.signals
        conversation = signals.conversation_id or agent.ask_conversation()
        if conversation is None:
            return "no conversation id yet"
        self._sent(agent, silence, "relaunch")
        agent.say(f"  interrupting the agent to resume conversation {conversation}")
        saved = (signals.error, signals.rate_limit)
        if not agent.interrupt_agent():
            return "aidd was interrupted"
        signals.error, signals.rate_limit = saved  # the interruption is not the agent's error
        try:
            agent.relaunch(conversation, self.adapter.encode_nudge(self.text))
        except AgentCliError as err:
            return str(err)
        return None
