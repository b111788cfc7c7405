"""The idle nudge (ADP-30..32): a message to an agent that went quiet. claude reads it on its
stdin, behind the prompt; opencode and kilo read no stdin once started, so they are interrupted
and relaunched with the nudge as the next message, after the prompt again when their
conversation did not hold it yet (issue 17: a nudge never loses the task)."""

from __future__ import annotations

from typing import NamedTuple, Protocol

from aidd.agents.base import Adapter, ErrorKind, NudgeMethod, Signals
from aidd.errors import AgentCliError
from aidd.events import EventLog
from aidd.session.idle import seconds_text
from aidd.session.liveness import Vitals


class Nudged(Protocol):
    """The attempt being nudged, as a nudge needs it."""

    @property
    def signals(self) -> Signals: ...

    def write_stdin(self, data: bytes) -> bool:
        """Queue `data` for the agent's stdin; False when stdin is closed."""
        ...

    def say(self, text: str, level: str = "") -> None: ...

    def ask_conversation(self) -> str | None:
        """The conversation the running CLI started, from the CLI itself (a run hung before
        its first model answer printed none)."""
        ...

    def holds_task(self, conversation: str) -> bool | None:
        """Does `conversation` hold the prompt, asked of the CLI? None: it cannot tell."""
        ...

    def interrupt_agent(self) -> bool:
        """Interrupt the agent, let it exit, kill what is left; False when aidd itself was
        interrupted meanwhile (its tree is killed next)."""
        ...

    def relaunch(self, conversation: str | None, message: bytes) -> None:
        """Start the CLI again on `conversation` (None: a new one) with `message` as its input;
        AgentCliError when it cannot start."""
        ...


class Delivery(NamedTuple):
    """How one nudge went: where it went, whether the prompt went again before it, and how
    aidd knew whether the conversation held the prompt (`task_check`, the event's field)."""

    with_task: bool = False
    task_check: str | None = None  # stdin, output, export, unknown, none
    conversation: str | None = None  # the conversation resumed; None: stdin or a new one
    why: str = ""  # said in the log after the method: alone or with the task, and why
    why_not: str | None = None  # not delivered: the reason


_STDIN = Delivery(task_check="stdin", why="alone: the prompt is ahead of it on stdin")
_NEW = Delivery(True, "none", why="with the original task: the agent had started no "
                                   "conversation yet")
# A conversation out of context or turns cannot take one more message: never resumed (issue 32).
_EXHAUSTED = Delivery(True, "none", why="with the original task in a new conversation: the "
                                        "last one ran out of context or turns")


class Nudger:
    """Delivers the nudges of one attempt, and remembers what its output handling must know
    of them."""

    def __init__(self, adapter: Adapter, text: str, events: EventLog, number: int, *,
                 prompt: str) -> None:
        self.adapter = adapter
        self.text = text
        self.prompt = prompt  # sent again before the nudge when the conversation lacks it
        self.events = events
        self.number = number
        self.count = 0
        self._outstanding = False  # a stdin nudge whose answering turn has not ended
        self._awaiting_answer = False  # a stdin nudge sent, no progress seen since
        self._state = ""  # the liveness state the nudge being sent was sent in, as shown
        self._resumed: str | None = None  # the conversation the last relaunch went on
        self._work: tuple[int, float | None] = (0, None)  # tool calls, last file change seen

    def worked(self, tool_calls: int, files_at: float | None) -> bool:
        """Did the agent work since the last look: a tool call, or a project file changed?
        Only work answers a nudge; a line of text does not (issue 28)."""
        calls, changed = self._work
        self._work = (tool_calls, files_at)
        return tool_calls > calls or (files_at is not None and files_at != changed)

    def nudge(self, agent: Nudged, silence: float, vitals: Vitals | None = None) -> None:
        """Nudge `agent` after `silence` seconds without output, in the state its `vitals`
        judged (issue 17; None when only output is watched); say and record whether the nudge
        got through, and whether the prompt went with it."""
        self.count += 1
        self._state = f" [{vitals.label()}]" if vitals is not None else ""
        method = self.adapter.nudge_method
        if method is NudgeMethod.STDIN:
            done = self._stdin(agent, silence)
        else:
            done = self._relaunch(agent, silence)
        if done.why_not is not None:
            agent.say(f"no output for {seconds_text(silence)}; nudge not delivered: "
                      f"{done.why_not}{self._state}", "WARN")
        delivered = done.why_not is None
        self.events.emit("nudge", number=self.number, silence_s=round(silence, 3),
                         method=method.value, delivered=delivered, why_not=done.why_not,
                         state=vitals.state.value if vitals is not None else None,
                         with_task=done.with_task if delivered else None,
                         task_check=done.task_check, conversation=done.conversation)

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

    def _sent(self, agent: Nudged, silence: float, method: str, why: str) -> None:
        agent.say(f"no output for {seconds_text(silence)}; nudge sent ({method}){self._state} "
                  f"{why}")
        for line in self.text.splitlines() or [""]:
            agent.say(f"  nudge: {line}")

    def _stdin(self, agent: Nudged, silence: float) -> Delivery:
        """claude reads stdin in order: the prompt, written at launch, is always ahead of the
        nudge, also when claude has not read it yet (docs/real-clis.md)."""
        if not agent.write_stdin(self.adapter.encode_nudge(self.text)):
            return _STDIN._replace(why_not="stdin is closed")
        self._outstanding = True
        self._awaiting_answer = True
        self._sent(agent, silence, "stdin", _STDIN.why)
        return _STDIN

    def _relaunch(self, agent: Nudged, silence: float) -> Delivery:
        """Interrupt, then resume the conversation with the nudge as the next message, after
        the prompt when the conversation did not hold it; with no conversation, start anew."""
        signals = agent.signals
        printed = signals.conversation_id
        agent.say(f"interrupting the agent to nudge it (no output for {seconds_text(silence)})")
        saved = (signals.error, signals.rate_limit)
        if not agent.interrupt_agent():
            return Delivery(why_not="aidd was interrupted")
        signals.error, signals.rate_limit = saved  # the interruption is not the agent's error
        done = self._where(agent, printed)
        self._sent(agent, silence, "relaunch", done.why)
        conversation = done.conversation
        agent.say(f"  resuming conversation {conversation}" if conversation
                  else "  starting a new conversation")
        message = (self.adapter.encode_prompt(f"{self.prompt.rstrip()}\n\n{self.text}")
                   if done.with_task else self.adapter.encode_nudge(self.text))
        try:
            agent.relaunch(conversation, message)
        except AgentCliError as err:
            return done._replace(why_not=str(err))
        self._resumed = conversation
        return done

    def _where(self, agent: Nudged, printed: str | None) -> Delivery:
        """Asked once the agent is stopped, so its conversation cannot change meanwhile."""
        error = agent.signals.error
        if error is not None and error.kind is ErrorKind.CONTEXT:
            return _EXHAUSTED
        if printed is not None:  # printed with the model's first answer: it saw the prompt
            return Delivery(False, "output", printed,
                            f"alone: conversation {printed} holds the task")
        conversation = self._resumed or agent.ask_conversation()
        if conversation is None:
            return _NEW
        held = agent.holds_task(conversation)
        if held:
            return Delivery(False, "export", conversation,
                            f"alone: conversation {conversation} holds the task")
        if held is False:
            return Delivery(True, "export", conversation, f"with the original task: "
                            f"conversation {conversation} did not hold it yet")
        return Delivery(True, "unknown", conversation, f"with the original task: the CLI "
                        f"could not tell whether conversation {conversation} held it")
