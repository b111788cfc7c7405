"""How the previous run on this project ended (issue 32), read at start from the end of
events.jsonl: a clean end with its reason, aidd killed (no `run_end`, the machine ran on) or the
machine died (no `run_end`, and the machine has booted since its last event). A restart says it
in its first lines, a `previous_run` event and, when an attempt was cut short, its first prompt,
so the agent reviews the half-finished work instead of redoing it.

events.jsonl is project content: only a well-formed run id, small positive attempt numbers,
short plain words and plain feature folder names from it reach the prompt."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple

from aidd.events import tail_events
from aidd.project.attemptfeature import feature_of
from aidd.project.checkpointnames import is_run_id

TAIL_BYTES = 1 << 20  # the end of the newest run: its last attempts and its end, if any
_WORD = re.compile(r"[a-z0-9_-]{1,40}")  # a reason, a prompt kind, a checkpoint label
_FOLDER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")  # a feature folder, as a prompt names it
_CUT_SHORT = ("signal", "budget")  # an attempt these reasons ended was stopped half-way
GATE_NAMES, GATE_NAME_CHARS = 50, 200  # of a gate event's new failures, as the event holds
# Attempts the run does not count toward a circular fix: retried, or the run's own end.
_UNCOUNTED = ("rate_limited", "signal", "budget", "fatal")


class PastAttempt(NamedTuple):
    """An attempt of a run that did not end (killed, or the machine died), for the circular-fix
    counts (run/circular.py) to go on across the restart (issue 32)."""

    number: int
    feature: str
    failed: bool  # its outcome was not a success
    reason: str  # its iteration_end.reason
    gate_new: tuple[str, ...]  # the gate's new failures after it (compared, never shown)


class Ending(Enum):
    """`previous_run.ending` in events.jsonl."""

    ENDED = "ended"  # it wrote its run_end: `reason` says why
    KILLED = "killed"  # no run_end, and the machine kept running: aidd was killed
    MACHINE_DIED = "machine_died"  # no run_end, and the machine has booted since


class PreviousRun(NamedTuple):
    run: str
    ending: Ending
    reason: str | None = None  # run_end.reason
    attempt: int | None = None  # the last attempt it started
    kind: str | None = None  # that attempt's prompt kind
    attempt_reason: str | None = None  # its iteration_end.reason; None: it never ended
    checkpoint: str | None = None  # the last checkpoint of that attempt
    feature: str | None = None  # the feature that attempt was on (issue 32), when known
    # Its attempts with a known feature, when it did not end: the night goes on after a kill.
    attempts: tuple[PastAttempt, ...] = ()

    @property
    def cut_short(self) -> bool:
        """Its last attempt was stopped half-way: killed with it, or ended by a signal or a
        budget."""
        if self.attempt is None:
            return False
        return self.attempt_reason is None or self.attempt_reason in _CUT_SHORT

    def line(self) -> str:
        """The start-up line: how it ended, and where its last attempt stood."""
        how = {Ending.ENDED: f"ended ({self.reason})", Ending.KILLED: "was killed",
               Ending.MACHINE_DIED: "ended with the machine (it has restarted since)"}
        text = f"the previous run {self.run} {how[self.ending]}"
        if self.cut_short:
            text += f" during attempt {self.attempt:03d}" + (f" ({self.kind})" if self.kind
                                                             else "")
            text += f" on feature {self.feature}" if self.feature else ""
            text += self._where()
        return text

    def _where(self) -> str:
        """`NNN` is the project before the attempt; `-prekill` and `-end` hold what it did."""
        label = self.checkpoint
        if label is None:
            return "; no checkpoint of it"
        if label.endswith(("-prekill", "-end")):
            return f"; its state was checkpointed at {label}"
        return f"; the project as it was before that attempt is checkpointed at {label}"

    def for_prompt(self) -> str:
        """A sentence for the first prompt when an attempt was cut short; empty otherwise."""
        if not self.cut_short:
            return ""
        line = self.line()
        return line[0].upper() + line[1:] + "."


def read_tail(events: Path, root: Path) -> list[dict[str, Any]]:
    """The end of events.jsonl, read once at start (before this run wrote anything): the
    previous run (`judge`), and the last iteration status.md shows until this run ends one."""
    return tail_events(events, root, TAIL_BYTES)


def name_feature(previous: PreviousRun | None,
                 in_progress: Callable[[], Sequence[str]]) -> PreviousRun | None:
    """An attempt cut short before it said its feature (it was in progress at no attempt's
    start): the feature in progress now, which it started (the prompt asks the agent to mark it
    first), when exactly one is. `in_progress` is read only then."""
    if previous is None or not previous.cut_short or previous.feature is not None:
        return previous
    return previous._replace(feature=feature_of(None, (), in_progress()))


def judge(events: list[dict[str, Any]], booted: float | None) -> PreviousRun | None:
    """The newest run in `events` (`read_tail`), or None when there is none. `booted`: when
    the machine booted (Unix seconds), None when unknown."""
    run = events[-1].get("run") if events else None
    if not isinstance(run, str) or not is_run_id(run):
        return None
    mine = [e for e in events if e.get("run") == run]
    ends = [e for e in mine if e.get("event") == "run_end"]
    attempt, kind = _last_attempt(mine)
    finished = [e for e in mine if e.get("event") == "iteration_end"
                and _number(e) == attempt and attempt is not None]
    labels = [_word(e.get("label")) for e in mine
              if e.get("event") == "checkpoint" and _number(e) == attempt and attempt]
    if ends:
        ending, reason = Ending.ENDED, _word(ends[-1].get("reason")) or "unknown"
    else:
        ending, reason = _unended(mine[-1], booted), None
    return PreviousRun(
        run, ending, reason, attempt, kind,
        (_word(finished[-1].get("reason")) or "unknown") if finished else None,
        next((label for label in reversed(labels) if label), None),
        _feature(mine, attempt), () if ends else _past_attempts(mine))


def _last_attempt(events: list[dict[str, Any]]) -> tuple[int | None, str | None]:
    for event in reversed(events):
        if event.get("event") == "iteration_start" and (number := _number(event)) is not None:
            return number, _word(event.get("kind"))
    return None, None


def _past_attempts(events: list[dict[str, Any]]) -> tuple[PastAttempt, ...]:
    gates: dict[int, list[str]] = {}
    for event in events:
        number, new = _number(event), event.get("new")
        if event.get("event") == "gate" and number is not None and isinstance(new, list):
            gates.setdefault(number, []).extend(
                n[:GATE_NAME_CHARS] for n in new[:GATE_NAMES] if isinstance(n, str))
    past = []
    for event in events:
        number, feature = _number(event), event.get("feature")
        reason = _word(event.get("reason")) or "unknown"
        if event.get("event") != "iteration_end" or number is None or not isinstance(
                feature, str) or not _FOLDER.fullmatch(feature) or reason in _UNCOUNTED:
            continue
        past.append(PastAttempt(number, feature, event.get("outcome") != "success", reason,
                                tuple(gates.get(number, ()))))
    return tuple(past)


def _feature(events: list[dict[str, Any]], attempt: int | None) -> str | None:
    """The last attempt's feature: its `iteration_end`'s when it ended, else the one its
    `iteration_start` knew."""
    for event in reversed(events):
        if event.get("event") in ("iteration_end", "iteration_start") and \
                _number(event) == attempt and attempt is not None:
            value = event.get("feature")
            if isinstance(value, str) and _FOLDER.fullmatch(value):
                return value
    return None


def _unended(last: dict[str, Any], booted: float | None) -> Ending:
    """No run_end: the machine died when it has booted since the run's last event."""
    stamp = last.get("ts")
    if booted is None or not isinstance(stamp, str):
        return Ending.KILLED
    try:
        when = datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return Ending.KILLED
    return Ending.MACHINE_DIED if when < booted else Ending.KILLED


def _number(event: dict[str, Any]) -> int | None:
    value = event.get("number")
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 1_000_000:
        return value
    return None


def _word(value: object) -> str | None:
    return value if isinstance(value, str) and _WORD.fullmatch(value) else None
