"""What the health verdict (health.py) needs of a run's events, added up one event at a time,
so a run keeps counters instead of its events (run/lifecycle.py). Events are untrusted: every
field is checked for its type and every string cleaned (`text`) as it is read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aidd.errors import result_words
from aidd.numbers import quantity as number
from aidd.reports.morning.fmt import clean, integer, text

# iteration_end reasons of a failed attempt -> (kind, what it is, the next step: {dir}
# stands for `--project-dir DIR`, {log} for the last such attempt's log). A reason not listed
# counts as "other_failures". A new kind of failure is one line here.
FAILURES: dict[str, tuple[str, str, str]] = {
    "provider_error": ("provider_error", "ended in a provider error (result 72)",
                       "check the provider's status, then the key: aidd --doctor {dir}"),
    "no_assistant": ("no_assistant", "got no answer from the model (result 70)",
                     "check the login and the model: aidd --doctor {dir}"),
    "idle_timeout": ("hung", "were killed as hung: silent, nudges unanswered (result 71)",
                     "read the end of {log} (aidd --report {dir} lists them); a slow tool "
                     "may need a longer --idle-timeout"),
    "wall_timeout": ("wall_timeout", "were cut at --timeout (result 124)",
                     "read {log}; raise --timeout, or ask for smaller steps: aidd {dir} "
                     "--prompt TEXT"),
    "no_work": ("no_work", "did nothing (result 75)",
                "read {log}; what is left: aidd --status {dir}"),
    "context_exhausted": ("context_exhausted", "ran out of context or turns (result 76)",
                          "read {log}; ask for smaller steps (aidd {dir} --prompt TEXT) or "
                          "use a model with a larger context (--model)"),
}


@dataclass
class Tally:
    """What the verdict needs of a run's events, added up one event at a time, so a run keeps
    counters instead of its events (run/lifecycle.py)."""

    attempts: int = 0  # counted: neither rate-limited nor stopped by a budget
    failed: dict[str, list[int]] = field(default_factory=dict)  # kind -> attempt numbers
    other: Counter[str] = field(default_factory=Counter)  # other failures by result
    nudges: Counter[int] = field(default_factory=Counter)  # attempt -> nudges
    waited_s: float = 0.0
    waits: int = 0
    stuck: tuple[int, ...] | None = None
    quit: tuple[float, int | None] | None = None  # failures in a row, last result
    budgets: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    gate: dict[str, tuple[int, int | None, str | None, tuple[str, ...]]] = field(
        default_factory=dict)  # command -> (new failures, attempt, log, first new)
    checkpoints_off: tuple[str, str] | None = None  # label, error
    undelivered: int = 0
    started: dict[str, None] = field(default_factory=dict)  # run ids, in order
    ended: dict[str, tuple[str, int | None]] = field(default_factory=dict)  # reason, exit
    signal: str | None = None
    findings_left: int | None = None
    set_aside: list[str] = field(default_factory=list)  # feature folders, in order

    def add(self, event: Mapping[str, Any]) -> None:
        name = event.get("event")
        if name == "iteration_end":
            self._attempt(event)
        elif name in _READERS:
            _READERS[name](self, event)

    def _attempt(self, event: Mapping[str, Any]) -> None:
        outcome, reason = text(event.get("outcome")), text(event.get("reason"), 40) or "?"
        if outcome == "rate_limited" or reason == "budget":
            return
        self.attempts += 1
        if outcome not in ("failure", "fatal"):
            return
        number_ = integer(event.get("number")) or 0
        if reason == "fatal":  # it ends the run with 8, whose reason names it
            self.failed.setdefault("fatal", []).append(number_)
        elif reason in FAILURES:
            self.failed.setdefault(FAILURES[reason][0], []).append(number_)
        else:
            result = integer(event.get("result"))
            self.other["result ?" if result is None else result_words(result)] += 1

    @property
    def failures(self) -> int:
        return sum(len(n) for n in self.failed.values()) + sum(self.other.values())


def _nudge(t: Tally, e: Mapping[str, Any]) -> None:
    t.nudges[integer(e.get("number")) or 0] += 1


def _wait(t: Tally, e: Mapping[str, Any]) -> None:
    t.waited_s += max(number(e.get("seconds")) or 0.0, 0.0)
    t.waits += 1


def _stuck(t: Tally, e: Mapping[str, Any]) -> None:
    listed = e.get("iterations")
    t.stuck = tuple(n for n in listed if type(n) is int) if isinstance(listed, list) else ()


def _quit(t: Tally, e: Mapping[str, Any]) -> None:
    t.quit = (number(e.get("failures")) or 0.0, integer(e.get("result")))


def _budget(t: Tally, e: Mapping[str, Any]) -> None:
    name = text(e.get("budget"), 40) or "a budget"
    t.budgets[name] = (number(e.get("used")), number(e.get("limit")))


def _gate(t: Tally, e: Mapping[str, Any]) -> None:
    if "slot" in e:  # a --parallel slot's worktree: a branch, not the project, was judged
        return
    new = e.get("new")
    firsts = tuple(clean(n, 80) for n in new[:2] if isinstance(n, str)) \
        if isinstance(new, list) else ()
    t.gate[text(e.get("name"), 60) or "?"] = (
        max(integer(e.get("new_failures")) or 0, 0), integer(e.get("number")),
        text(e.get("log"), 120), firsts)


def _checkpoint_failed(t: Tally, e: Mapping[str, Any]) -> None:
    t.checkpoints_off = (text(e.get("label"), 20) or "?", text(e.get("error"), 120) or "?")


def _notify_failed(t: Tally, e: Mapping[str, Any]) -> None:
    t.undelivered += 1


def _run_start(t: Tally, e: Mapping[str, Any]) -> None:
    t.started[text(e.get("run"), 60) or "?"] = None


def _run_end(t: Tally, e: Mapping[str, Any]) -> None:
    t.ended[text(e.get("run"), 60) or "?"] = (text(e.get("reason"), 40) or "?",
                                              integer(e.get("exit_code")))


def _signal(t: Tally, e: Mapping[str, Any]) -> None:
    t.signal = text(e.get("name"), 20) or "a signal"


def _remediation_cap(t: Tally, e: Mapping[str, Any]) -> None:
    t.findings_left = integer(e.get("unfixed"))


def _set_aside(t: Tally, e: Mapping[str, Any]) -> None:
    t.set_aside.append(text(e.get("feature"), 80) or "?")


# The nudge cap's own event (issue 28 item 2) ends the attempt with result 71, which the
# attempt's iteration_end already counts as hung: only `nudge` is read here.
_READERS = {"nudge": _nudge, "rate_limit_sleep": _wait, "pace": _wait, "stuck": _stuck,
            "failure_threshold": _quit, "budget_exhausted": _budget, "gate": _gate,
            "checkpoint_failed": _checkpoint_failed, "notify_failed": _notify_failed,
            "run_start": _run_start, "run_end": _run_end, "signal": _signal,
            "remediation_cap": _remediation_cap, "feature_set_aside": _set_aside}
