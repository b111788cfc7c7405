"""One verdict on a run's health (issue 28): its events (the dicts of events.jsonl) in, `ok`,
`attention` or `failed` out, with ranked reasons, each saying what happened, with counts, and
what a person would do next. Pure; the one place that decides whether a run was bad: the
morning report's "Look at first", the run's last line, `--status --json`, the run's end
notifications and the heartbeat's last ping all ask it. It sits in reports/ (layer 8), below
notify/ and run/, which both need it; the events are added up by `healthtally`."""

from __future__ import annotations

import shlex
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple

from aidd.reports.healthtally import FAILURES, Tally
from aidd.reports.morning.fmt import attempt, clean, duration, plural

LONG_WAIT_S = 1800  # rate-limit sleeps and pacing pauses worth a look (notify's 30 minutes)
NUDGES_NOTED = 3  # nudges in a run worth a look: the default nudge cap of one attempt
LISTED = 5  # attempt numbers named in a reason


class Verdict(Enum):
    OK = "ok"
    ATTENTION = "attention"
    FAILED = "failed"


class Reason(NamedTuple):
    kind: str  # one per class, e.g. "provider_error", "stuck", "features_left"
    what: str  # one line: what happened, with counts
    next: str  # what a person would do: a command with --project-dir, or a flag

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "what": self.what, "next": self.next}


class Health(NamedTuple):
    verdict: Verdict
    headline: str  # why, in one line: the failing causes, else the first reason
    reasons: tuple[Reason, ...]  # most urgent first, one per kind

    @property
    def line(self) -> str:
        """`failed: stuck: …`, `attention: …`, `ok`: what a last line or a title shows."""
        return self.verdict.value if self.verdict is Verdict.OK else \
            f"{self.verdict.value}: {self.headline}"

    @property
    def summary(self) -> str:
        """The verdict, with the headline when no reason says it: a report lists them."""
        if any(r.what == self.headline for r in self.reasons):
            return self.verdict.value
        return f"{self.verdict.value}: {self.headline}"

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict.value, "headline": self.headline,
                "reasons": [r.to_json() for r in self.reasons]}


class FeaturesLeft(NamedTuple):
    """Counted features not done at the end (neither done nor waiting for a review)."""

    left: int
    total: int


_BUDGET_FLAGS = {"wall_time": "--max-wall-time", "tokens": "--max-tokens",
                 "cost_usd": "--max-cost-usd", "daily_tokens": "--daily-max-tokens",
                 "daily_cost_usd": "--daily-max-cost-usd"}
# run_end reasons that make a run failed: what they mean, and the next step ({dir} as above)
_FAILED_ENDS = {"fatal": ("the agent CLI cannot be used", "aidd --doctor {dir}"),
                "error": ("aidd stopped on an error", "read its error line and "
                          ".automaker/aidd-crash.log if there is one; aidd --doctor {dir}"),
                "set_aside": ("nothing workable was left but features set aside after "
                              "repeated endings", "read why in the report (aidd --report "
                              "{dir}), fix or reword each, then set it back to backlog: aidd "
                              "feature set ID status=backlog {dir}")}


@dataclass(frozen=True)
class Context:
    """What the caller knows besides the events."""

    features: FeaturesLeft | None = None  # what is left at the end, as the caller counted it
    running: Collection[str] = ()  # run ids still running: no `run_end` yet is no death
    unread: str | None = None  # why events.jsonl could not be read at all


def judge(events: Iterable[Mapping[str, Any]], project_dir: Path | str,
          context: Context = Context()) -> Health:
    """The verdict on `events`: one run's, or a report's window of runs."""
    tally = Tally()
    for event in events:
        tally.add(event)
    return verdict(tally, project_dir, context)


def verdict(tally: Tally, project_dir: Path | str, context: Context = Context()) -> Health:
    """`judge` on events already added up."""
    where = f"--project-dir {shlex.quote(str(project_dir))}"
    fatal = list(_fatal(tally, where, context.running))
    others = list(_others(tally, where, context.features))
    if context.unread is not None:
        others.insert(0, Reason("events_unreadable", f"events.jsonl not read: "
                                f"{clean(context.unread, 120)}",
                                f"look at .automaker/events.jsonl; aidd --doctor {where}"))
    causes = [r.what for r in fatal]
    if tally.failures * 2 > tally.attempts > 0:  # most attempts failed: their kinds follow
        causes.append(f"{tally.failures} of {tally.attempts} attempts failed")
    if causes:
        return Health(Verdict.FAILED, "; ".join(causes), (*fatal, *others))
    if others:
        return Health(Verdict.ATTENTION, others[0].what, tuple(others))
    return Health(Verdict.OK, "nothing stands out", ())


def _fatal(t: Tally, where: str, running: Collection[str]) -> Iterable[Reason]:
    died = [run for run in t.started if run not in t.ended and run not in running]
    if died:
        runs = f"run {died[-1]} has" if len(died) == 1 else \
            f"{len(died)} runs (the last {died[-1]}) have"
        yield Reason("run_died", f"{runs} no run_end: aidd was killed or its machine stopped",
                     f"read .automaker/aidd-crash.log if there is one; start again: "
                     f"aidd {where}")
    for reason, code in t.ended.values():
        if reason in _FAILED_ENDS:
            meaning, step = _FAILED_ENDS[reason]
            yield Reason(f"ended_{reason}", f"run ended {reason} (exit {code}): {meaning}",
                         step.format(dir=where))
            break
    if t.stuck is not None:
        shown = ", ".join(attempt(n) for n in t.stuck[-LISTED:])
        log = f".automaker/iterations/{attempt(t.stuck[-1])}.log" if t.stuck else "its log"
        yield Reason("stuck", f"stuck: attempts {shown} changed nothing",
                     f"read {log}, then what is left: aidd --status {where}")
    if t.quit is not None:
        failures, result = t.quit
        yield Reason("quit_on_abort", f"--quit-on-abort ended the run after {failures:g} "
                     f"failures in a row (last result {result})", f"start again: aidd {where}")


def _others(t: Tally, where: str, features: FeaturesLeft | None) -> Iterable[Reason]:
    yield from _failures(t, where)
    if t.budgets:
        yield _budget_reason(t, where)
    yield from _gate_red(t, where)
    if t.set_aside:
        shown = ", ".join(t.set_aside[-LISTED:])
        yield Reason("set_aside", f"{plural(len(t.set_aside), 'feature')} set aside after "
                     f"attempts that ended the same way: {shown}",
                     f"read why (aidd --report {where}); set each back to backlog once fixed: "
                     f"aidd feature set ID status=backlog {where}")
    if features is not None and features.left > 0:
        yield Reason("features_left", f"{features.left} of {plural(features.total, 'feature')}"
                     " not done at the end", f"which ones: aidd --status {where}")
    yield from _interruptions(t, where)


def _budget_reason(t: Tally, where: str) -> Reason:
    spent = []
    for name, (used, limit) in t.budgets.items():
        figures = f": used {used:g} of {limit:g}" if used is not None and limit is not None \
            else ""
        spent.append(f"{name}{figures}")
    flags = " or ".join(dict.fromkeys(_BUDGET_FLAGS.get(n, "its flag") for n in t.budgets))
    return Reason("budget", f"budget exhausted: {'; '.join(spent)}",
                  f"raise {flags}, or start again later: aidd {where}")


def _failures(t: Tally, where: str) -> Iterable[Reason]:
    for kind, label, step in FAILURES.values():
        numbers = t.failed.get(kind)
        if numbers:
            log = f".automaker/iterations/{attempt(numbers[-1])}.log"
            shown = ", ".join(attempt(n) for n in numbers[-LISTED:])
            yield Reason(kind, f"{len(numbers)} of {plural(t.attempts, 'attempt')} {label}: "
                         f"{shown}", step.format(dir=where, log=log))
    if t.other:
        kinds = ", ".join(f"{result} ×{n}" for result, n in t.other.most_common(4))
        yield Reason("other_failures", f"{sum(t.other.values())} of "
                     f"{plural(t.attempts, 'attempt')} failed otherwise ({kinds})",
                     f"read their logs in .automaker/iterations; aidd --report {where}")
    nudges = sum(t.nudges.values())
    if nudges >= NUDGES_NOTED:
        yield Reason("nudges", f"{plural(nudges, 'nudge')} in "
                     f"{plural(len(t.nudges), 'attempt')}: the agent went silent",
                     f"read their logs (aidd --report {where}); --idle-nudge-timeout sets "
                     "when a nudge comes")


def _gate_red(t: Tally, where: str) -> Iterable[Reason]:
    red = {name: row for name, row in t.gate.items() if row[0] > 0}
    if not red:
        return
    name, (new, number_, log, firsts) = next(iter(red.items()))
    more = f" and {len(red) - 1} more commands" if len(red) > 1 else ""
    listed = f" ({', '.join(firsts)})" if firsts else ""
    yield Reason("gate_red", f"gate {name}{more} red at the end: {plural(new, 'new failure')}"
                 f"{listed} at attempt {attempt(number_)}",
                 f"read {log or '.automaker/iterations/NNN.gate.log'}; the next run's prompt "
                 f"asks the agent to fix it: aidd {where}")


def _interruptions(t: Tally, where: str) -> Iterable[Reason]:
    if t.waited_s >= LONG_WAIT_S:
        yield Reason("long_waits", f"waited {duration(t.waited_s)} on rate limits and pacing "
                     f"({plural(t.waits, 'pause')})",
                     f"spread the quota over its window: aidd {where} --pace-at 80")
    if t.checkpoints_off is not None:
        label, error = t.checkpoints_off
        what = (f"checkpoints refused: {error}" if label == "refused" else
                f"checkpoint {label} failed ({error}); the rest of the run had none")
        yield Reason("checkpoints_off", what, f"aidd --doctor {where}")
    if t.signal is not None:
        yield Reason("signal", f"interrupted by {t.signal}", f"start again: aidd {where}")
    if t.findings_left:
        yield Reason("findings_left", f"{plural(t.findings_left, 'finding')} not fixed after "
                     "the remediation cap", f"which ones: aidd --status {where}")
    if t.undelivered:
        yield Reason("notify_failed", f"notifications or pings not delivered: {t.undelivered}",
                     f"aidd --doctor {where} checks the endpoints")
