"""The two-stage idle machine (SUP-20..22) and the nudge cap (issue 28): pure, driven by the
times it is given."""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple


class IdleAction(Enum):
    NONE = "none"
    NUDGE = "nudge"
    KILL = "kill"  # silent for the idle timeout
    HUNG = "hung"  # a nudge due after --max-nudges nudges that no work answered


class IdleStage(Enum):
    OFF = "off"  # --idle-timeout 0: no idle supervision
    WATCHING = "watching"  # stage 1: waiting for the nudge (or the kill, without a nudge)
    NUDGED = "nudged"  # stage 2: nudge sent, waiting for the kill
    KILLED = "killed"


class IdlePolicy(NamedTuple):
    nudge_s: float
    idle_s: float
    max_nudges: int = 0  # nudges in a row without work before the agent counts as hung; 0: no cap

    @property
    def enabled(self) -> bool:
        return self.idle_s > 0

    @property
    def nudge_enabled(self) -> bool:
        """0 = no nudge; a nudge at or after the kill is no nudge either (CLI)."""
        return self.enabled and 0 < self.nudge_s < self.idle_s

    def linger_grace(self, cap_s: float = 30.0) -> float:
        """30 s, or the nudge timeout if shorter (the idle timeout without a nudge) (SUP-35)."""
        if self.nudge_enabled:
            return min(cap_s, self.nudge_s)
        return min(cap_s, self.idle_s) if self.enabled else cap_s


class IdleMonitor:
    """Any byte returns the machine to stage 1 with a fresh timer. Only work (a tool call, a
    project file change) answers a nudge: after `max_nudges` nudges with none, the next nudge
    due is the kill (issue 28: an agent that answers each nudge with a line of text and goes
    quiet was nudged 149 times in 10 minutes, and never killed)."""

    def __init__(self, policy: IdlePolicy, now: float) -> None:
        self.policy = policy
        self.last_activity = now
        self.stage = IdleStage.WATCHING if policy.enabled else IdleStage.OFF
        self.unanswered = 0  # nudges sent since the agent last worked

    def activity(self, now: float) -> None:
        self.last_activity = now
        if self.stage is IdleStage.NUDGED:
            self.stage = IdleStage.WATCHING

    def busy(self, now: float) -> None:
        """The agent works without printing (issue 17): the silence starts again, but a nudge
        already sent stays unanswered, so a relaunched CLI's start-up cannot earn a second
        nudge instead of the kill (SUP-23)."""
        self.last_activity = now

    def work(self) -> None:
        """The agent called a tool or changed a project file: its nudges are answered."""
        self.unanswered = 0

    @property
    def capped(self) -> bool:
        cap = self.policy.max_nudges
        return cap > 0 and self.unanswered >= cap

    def silence(self, now: float) -> float:
        return max(0.0, now - self.last_activity)

    def due(self) -> float | None:
        """When `poll` will next return an action; None when nothing is pending."""
        if self.stage is IdleStage.WATCHING and self.policy.nudge_enabled:
            return self.last_activity + self.policy.nudge_s
        if self.stage in (IdleStage.WATCHING, IdleStage.NUDGED):
            return self.last_activity + self.policy.idle_s
        return None

    def poll(self, now: float) -> IdleAction:
        due = self.due()
        if due is None or now < due:
            return IdleAction.NONE
        nudge_due = self.stage is IdleStage.WATCHING and self.policy.nudge_enabled
        if nudge_due and not self.capped:
            self.stage = IdleStage.NUDGED
            self.unanswered += 1
            return IdleAction.NUDGE
        self.stage = IdleStage.KILLED
        return IdleAction.HUNG if nudge_due else IdleAction.KILL


def seconds_text(value: float) -> str:
    """A silence or a limit as the console shows it: `0.5s`, `12s`."""
    return f"{value:.1f}s" if value < 1 else f"{value:.0f}s"
