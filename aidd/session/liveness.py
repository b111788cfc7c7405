"""Is a silent agent alive? Its state judged from several signals (issue 17): output, a tool call
in flight, the CPU its process tree uses, files changing in the project, its final result
printed. Pure: the runner hands in the readings (callables) and the times.

`busy` time is not silence: the idle machine hears it as activity, for at most `busy_timeout_s`
after the agent's last output; past that the agent counts as hung. `waiting` (a conversation
under way, nothing else moving: a model request in flight) and `hung` are silence, as before.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from enum import Enum
from typing import NamedTuple

SAMPLE_S = 1.0  # the tree's CPU is read at most this often
WINDOW_S = 3.0  # CPU and file changes are judged over the last seconds
BUSY_CPU_SHARE = 0.10  # of one core; a CLI waiting on its model uses 0-7 % (docs/decisions.md)
REPORT_AFTER_S = 5.0  # a state is reported once it has lasted this long (no event storm)


class State(Enum):
    ACTIVE = "active"  # printing
    BUSY = "busy"  # silent, but its processes use CPU or files change
    WAITING = "waiting"  # silent in a conversation: a model request in flight
    LINGERING = "lingering"  # its final result is printed, the process is still there
    HUNG = "hung"  # none of the above (a tool call in flight with nothing running included)


class Probe(NamedTuple):
    """What the runner can tell about the agent at any moment."""

    cpu_s: Callable[[], float | None]  # CPU seconds its tree used so far; None: unknown
    files_at: Callable[[], float | None]  # when a project file last changed (monotonic)
    tool_open: Callable[[], bool]  # a tool call without its result yet
    conversation: Callable[[], bool]  # the CLI has started talking (JSON seen)
    lingering: Callable[[], bool]  # its final event is printed


class Vitals:
    """One attempt's liveness. `output(now)` on every byte the idle machine hears; `tick(now)`
    whenever the runner wakes: while silent it samples every `SAMPLE_S` (`due()` says when) and
    returns the state, and calls `report` with a state once it has held `REPORT_AFTER_S`."""

    def __init__(self, probe: Probe, start: float, busy_timeout_s: float,
                 report: Callable[[State, float], object] = lambda state, since: None) -> None:
        self.probe = probe
        self._report = report
        self.start = start
        self.busy_timeout_s = busy_timeout_s  # 0: busy is never cut short
        self.state = State.ACTIVE
        self.since = start
        self.why = "printing"
        self._last_output = start
        self._busy_since: float | None = None
        self._cpu: deque[tuple[float, float]] = deque()
        self._sampled = start - SAMPLE_S
        self._reported: State | None = None

    def output(self, now: float) -> None:
        self._last_output = now
        self._busy_since = None
        self._cpu.clear()  # the share is judged on silence alone
        self._enter(State.ACTIVE, now, "printing")

    def tick(self, now: float, *, fresh: bool = False) -> State:
        """Sample when due, or now when `fresh` (a nudge or kill is about to be decided: the
        last sample may be most of a second old); the state, and its report when due."""
        if now >= self.due() or (fresh and now > self._sampled):
            self.sample(now)
        if self.state is not self._reported and now - self.since >= REPORT_AFTER_S:
            self._reported = self.state
            self._report(self.state, round(self.since - self.start, 3))
        return self.state

    def label(self) -> str:
        return f"{self.state.value}: {self.why}"

    def due(self) -> float:
        return max(self._sampled + SAMPLE_S, self._last_output + SAMPLE_S)

    def sample(self, now: float) -> State:
        """Read every signal now; the state it gives (BUSY: the silence is not idle)."""
        self._sampled = now
        cpu = self.probe.cpu_s()
        if cpu is not None:
            self._cpu.append((now, cpu))
            while len(self._cpu) > 2 and now - self._cpu[1][0] >= WINDOW_S:
                self._cpu.popleft()
        state, why = self._judge(now)
        self._enter(state, now, why)
        return state

    def _judge(self, now: float) -> tuple[State, str]:
        probe = self.probe
        if probe.lingering():
            return State.LINGERING, "its final result is printed"
        if now - self._last_output < SAMPLE_S:
            return State.ACTIVE, "printing"
        busy = self._busy_why(now)
        if busy is not None:
            if self._busy_since is None:
                self._busy_since = now
            spent = now - self._busy_since
            if not self.busy_timeout_s or spent < self.busy_timeout_s:
                return State.BUSY, busy
            return State.HUNG, f"busy ({busy}) for {spent:.0f}s, past --busy-timeout"
        return self._silent()

    def _silent(self) -> tuple[State, str]:
        if self.probe.tool_open():  # e.g. stuck at a prompt, or on a dead socket
            return State.HUNG, "a tool call in flight, but nothing runs"
        if self.probe.conversation():
            return State.WAITING, "waiting for the model"
        return State.HUNG, "no sign of life"

    def _busy_why(self, now: float) -> str | None:
        """What shows work, or None. A tool call in flight alone does not: a tool waiting on
        nothing (a permission prompt, a dead socket) is the hang the nudge is for."""
        share = self._cpu_share()
        changed = self.probe.files_at()
        if share is not None and share >= BUSY_CPU_SHARE:
            why = f"its processes using {share:.0%} of a core"
        elif changed is not None and now - changed < WINDOW_S and changed >= self.start:
            why = "files changing"
        else:
            return None
        return f"a tool call in flight, {why}" if self.probe.tool_open() else why

    def _cpu_share(self) -> float | None:
        if len(self._cpu) < 2:
            return None
        (t0, c0), (t1, c1) = self._cpu[0], self._cpu[-1]
        return max(0.0, c1 - c0) / (t1 - t0) if t1 > t0 else None

    def _enter(self, state: State, now: float, why: str) -> None:
        self.why = why
        if state is not self.state:
            self.state, self.since = state, now
