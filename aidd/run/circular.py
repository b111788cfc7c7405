"""Circular fixes (issue 32): a feature whose attempts end the same way N times
(--max-attempts-per-feature) is set aside for the night: AutoMaker's `failed` status, with why
in its `error` (what AutoMaker's board shows on the card, docs/automaker.md), a
`feature_set_aside` event, and every later prompt told not to take it. The loop moves on; a run
left with nothing workable but set-aside features ends with reason `set_aside`."""

from __future__ import annotations

from typing import NamedTuple

from aidd.project import featurestate
from aidd.project.featurescan import FEATURE_FILE, reread, rewrite
from aidd.run.iteration import Attempt
from aidd.run.journal import Journal
from aidd.run.lastattempt import ending
from aidd.run.preflight import RunPlan
from aidd.run.previousrun import PastAttempt
from aidd.session.outcome import Outcome

SameWay = tuple[str, ...]  # what two attempts that ended the same way share
ERROR_FIELD = "error"  # AutoMaker's Feature.error: the board shows it on the card
LISTED = 10  # set-aside features the prompt names; each line is capped
LINE_CHARS = 150


def same_way(attempt: Attempt, gate_failures: tuple[str, ...]) -> SameWay | None:
    """How an attempt ended, as far as repeating it is concerned: the gate's new failures, else
    a failure's kind (no work, a hung kill, an exit status, ...), else the project's tree at
    its end (the same change again); None when none of these is known."""
    if gate_failures:
        return ("gate", *sorted(gate_failures))
    if attempt.outcome.outcome is not Outcome.SUCCESS:
        return ("ending", attempt.outcome.reason.value)
    return None if attempt.tree is None else ("tree", attempt.tree)


class Ended(NamedTuple):
    number: int
    words: str  # how it ended


class SetAside(NamedTuple):
    feature: str  # its folder
    attempts: tuple[Ended, ...]  # the attempts that ended the same way, oldest first

    @property
    def why(self) -> str:
        numbers = ", ".join(f"{a.number:03d}" for a in self.attempts)
        return (f"set aside by aidd: {len(self.attempts)} attempts ({numbers}) ended the same "
                f"way: {self.attempts[-1].words}")


class CircularWatch:
    """Counts each feature's endings in this run; the Nth alike sets the feature aside."""

    def __init__(self, limit: int) -> None:
        self._limit = limit  # 0: never
        self._seen: dict[tuple[str, SameWay], list[Ended]] = {}

    def add(self, feature: str | None, way: SameWay | None, ended: Ended) -> SetAside | None:
        if self._limit <= 0 or feature is None or way is None:
            return None
        alike = self._seen.setdefault((feature, way), [])
        alike.append(ended)
        if len(alike) < self._limit:
            return None
        # Its count starts again: a person may set it back to work tonight.
        for key in [k for k in self._seen if k[0] == feature]:
            del self._seen[key]
        return SetAside(feature, tuple(alike))


class CircularFixes:
    """The run's watch, its writes to the feature files and what the prompts are told."""

    def __init__(self, plan: RunPlan, journal: Journal) -> None:
        self._plan = plan
        self._journal = journal
        self._watch = CircularWatch(plan.settings.max_attempts_per_feature)
        self.set_aside: dict[str, SetAside] = {}  # by folder, in this run
        previous = plan.previous_run
        for past in previous.attempts if previous is not None else ():
            self._watch.add(past.feature, _past_way(past), Ended(past.number, _past_words(past)))

    def after(self, attempt: Attempt, gate_failures: tuple[str, ...]) -> bool:
        """After an attempt that counted: True when its feature was set aside just now."""
        end = ending(attempt.outcome, gate_failures)
        words = end.words if end is not None else "it finished, leaving the files as the others did"
        aside = self._watch.add(attempt.feature, same_way(attempt, gate_failures),
                                Ended(attempt.number, words))
        if aside is None or not self._mark(aside):
            return False
        self.set_aside[aside.feature] = aside
        self._journal.say(f"feature {aside.feature}: {aside.why}; the next attempts leave it "
                          "for a person", level="WARN")
        self._journal.events.emit(
            "feature_set_aside", number=attempt.number, feature=aside.feature,
            attempts=[a.number for a in aside.attempts], endings=[a.words for a in aside.attempts],
            limit=self._plan.settings.max_attempts_per_feature)
        return True

    def lines(self) -> tuple[str, ...]:
        """For the prompt: `folder: why`, the newest first, capped."""
        shown = [f"{name}: {aside.why}" for name, aside in reversed(self.set_aside.items())]
        return tuple(_line(text) for text in shown[:LISTED])

    def _mark(self, aside: SetAside) -> bool:
        """AutoMaker's `failed` with why in `error`, re-read and rewritten atomically, never
        through a link; False when the feature is gone, done, or no longer workable (a person
        or the agent moved it) or the file cannot be read or written."""
        paths = self._plan.paths
        location = str(paths.features / aside.feature / FEATURE_FILE)
        try:
            data = reread(paths, location)
            if data is None or featurestate.is_done(data) or not featurestate.is_workable(
                    data.get("status")):
                return False
            rewrite(paths, location, {**data, "status": featurestate.FAILED_STATUS,
                                      ERROR_FIELD: aside.why})
        except (OSError, ValueError) as exc:
            self._journal.warn(f"feature {aside.feature} not set aside: {exc}")
            return False
        return True


def _past_way(past: PastAttempt) -> SameWay | None:
    """`same_way` of an attempt of a run that was killed: its tree is not in the events."""
    if past.gate_new:
        return ("gate", *sorted(past.gate_new))
    return ("ending", past.reason) if past.failed else None


def _past_words(past: PastAttempt) -> str:
    """Plain words only: the names in events.jsonl (project content) never reach a prompt."""
    if past.gate_new:
        return f"the validation gate had the same new failures (last run, {len(past.gate_new)})"
    return f"it ended with {past.reason.replace('_', ' ')} (last run)"


def _line(text: str) -> str:
    flat = " ".join(text.split()).replace("```", "ʼʼʼ")
    return flat if len(flat) <= LINE_CHARS else flat[:LINE_CHARS - 1] + "…"
