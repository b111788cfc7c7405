"""What the next prompt is told of the previous attempt at the same work (issue 32): how it
ended in words, the files it changed, the last lines of its log and one sentence of what to do
differently. After a success, nothing: the memory of that work is forgotten."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from aidd.fsio import open_read
from aidd.logs.cleaning import clean_bytes
from aidd.prompts.context import LastAttemptInfo
from aidd.prompts.select import PromptKind
from aidd.run.iteration import Attempt
from aidd.run.phases import Phase
from aidd.session.outcome import Outcome, Reason, SessionOutcome

# Every part is capped, so the module adds at most 8,000 characters to a prompt
# (docs/templates.md; a test renders every part at its cap): 20 paths of 120 characters, 15 log
# lines of 200, 10 failing tests of 120 or a message of 200, and the fixed sentences.
FILES_SHOWN = 20
PATH_CHARS = 120
TAIL_LINES = 15
LINE_CHARS = 200
MESSAGE_CHARS = 200
TAIL_READ = 64 * 1024  # bytes read from the log's end: far more than 15 capped lines need
HANDOFF_READ = 1024 * 1024  # for the hand-off: the last plan may be far back in a long log
FAILURES_SHOWN = 10

_NUDGE_ECHO = re.compile(r"\[aidd \d\d:\d\d:\d\d\] +nudge: ")

Work = tuple[str, str, str]  # the same work: phase, audit (or ""), prompt kind


def work_of(phase: Phase, kind: PromptKind) -> Work:
    return phase.kind.value, phase.audit.name if phase.audit else "", kind.value


class Ending(NamedTuple):
    words: str  # how the attempt ended, as the prompt says it
    advice: str  # one sentence of what to do differently


_STUCK_ADVICE = ("Work in short, visible steps: run long commands with a time limit and in the "
                 "background, and say what you are doing after each step.")


def _silent(outcome: SessionOutcome) -> Ending:
    nudges = _count(outcome.nudges, "nudge")
    if outcome.killed == "hung":
        return Ending(f"aidd killed it as hung: {nudges} answered without any work", _STUCK_ADVICE)
    return Ending(f"aidd killed it after a silence past --idle-timeout ({nudges} unanswered)",
                  _STUCK_ADVICE)


def _provider(outcome: SessionOutcome) -> Ending:
    message = _line(outcome.message or "no message", MESSAGE_CHARS)
    return Ending(f"the model provider failed: {message}",
                  "Go on from the project's current state; check what the attempt already "
                  "wrote rather than redoing it.")


def _exited(outcome: SessionOutcome) -> Ending:
    return Ending(f"the CLI exited with status {outcome.exit_status} (an error or a crash)",
                  "Read the last lines below for what went wrong and avoid repeating it.")


def _exhausted(outcome: SessionOutcome) -> Ending:
    message = _line(outcome.message or "no message", MESSAGE_CHARS)
    return Ending(f"its conversation ran out of context or turns: {message}",
                  "This is a new conversation: start from the hand-off above and the project's "
                  "files, read only the parts you need, and commit each finished part early.")


def _fixed(words: str, advice: str) -> Callable[[SessionOutcome], Ending]:
    return lambda outcome: Ending(words, advice)


# A reason missing here ends the run (a signal, a budget, a fatal CLI error) or is retried as
# it was (a rate limit): there is no next prompt of that work to tell.
_ENDINGS: dict[Reason, Callable[[SessionOutcome], Ending]] = {
    Reason.IDLE_TIMEOUT: _silent,
    Reason.PROVIDER_ERROR: _provider,
    Reason.EXIT_STATUS: _exited,
    Reason.WALL_TIMEOUT: _fixed(
        "aidd stopped it at the attempt's time limit (--timeout) before it finished",
        "Take a smaller step: finish, verify and commit one part well within the time limit, "
        "and leave the rest for the next attempt."),
    Reason.NO_WORK: _fixed(
        "it ended without a tool call and without changing a file (no work)",
        "Do the work itself: choose the task, change the files, verify and record it, instead "
        "of answering in words."),
    Reason.NO_ASSISTANT: _fixed(
        "the CLI ended without a single answer from the model",
        "Start from the project's current state and keep the first steps small."),
    Reason.CONTEXT_EXHAUSTED: _exhausted,
    Reason.LINGER: _fixed(
        "its last turn ended in an error and the CLI did not exit",
        "Read the error in the last lines below and fix its cause before going on."),
}


def ending(outcome: SessionOutcome, gate_failures: tuple[str, ...]) -> Ending | None:
    """The attempt's ending in words, or None when there is nothing to learn from it: a
    success with a green gate, or an end no prompt of the same work follows."""
    if outcome.outcome is Outcome.SUCCESS:
        if not gate_failures:
            return None
        return Ending(f"it finished, but the validation gate then had new failures: "
                      f"{_listed(gate_failures)}",
                      "Make those checks pass first (never by weakening or skipping a test), "
                      "then verify the whole change again before anything new.")
    make = _ENDINGS.get(outcome.reason)
    return None if make is None else make(outcome)


def transcript_tail(root: Path, log: Path) -> str:
    """The last lines of an attempt's log, cleaned: the agent's text, the rendered events and
    aidd's messages; the header, the trailer and raw JSON events left out. Empty when the log
    cannot be read (a link planted there is refused, as everywhere)."""
    kept = [_line(ln, LINE_CHARS) for ln in _log_lines(root, log, TAIL_READ) if _worth_showing(ln)]
    return "\n".join(kept[-TAIL_LINES:])


def _log_lines(root: Path, log: Path, size: int) -> list[str]:
    """The cleaned lines of the log's last `size` bytes; none when it cannot be read."""
    try:
        with open_read(root, log) as file:
            start = max(0, os.fstat(file.fileno()).st_size - size)
            file.seek(start)
            data = file.read(size)
    except OSError:
        return []
    lines = clean_bytes(data).decode("utf-8", "replace").splitlines()
    return lines[1:] if start else lines  # the first line read may be cut


def _worth_showing(line: str) -> bool:
    """The header and trailer (`[aidd] `), raw JSON events and the nudge's own text, which
    aidd repeats in the log line by line (`[aidd HH:MM:SS]   nudge: `), are left out."""
    text = line.strip()
    return (bool(text) and not text.startswith(("[aidd] ", "{"))
            and _NUDGE_ECHO.match(text) is None)


def summarise(attempt: Attempt, gate_failures: tuple[str, ...], root: Path,
              log: Path) -> LastAttemptInfo | None:
    end = ending(attempt.outcome, gate_failures)
    if end is None:
        return None
    files = attempt.changed
    info = LastAttemptInfo(
        failed=True, number=attempt.number, result=attempt.outcome.result, ending=end.words,
        files=tuple(_line(f, PATH_CHARS) for f in files[:FILES_SHOWN]),
        more_files=max(0, len(files) - FILES_SHOWN), advice=end.advice)
    if attempt.outcome.reason is not Reason.CONTEXT_EXHAUSTED:
        return info._replace(transcript=transcript_tail(root, log))
    # The next attempt is a new conversation: aidd's hand-off instead of the log's last lines.
    from aidd.logs.handoff import handoff  # lazy: only after a context exhaustion

    hand = handoff(_log_lines(root, log, HANDOFF_READ))
    return info._replace(handoff=True, plan=hand.plan, last_message=hand.message)


def merge_refused(number: int, reason: str, why: str, branch: str,
                  onto: str) -> LastAttemptInfo:
    """A finished feature whose branch the merge queue sent back (--parallel, reason
    `conflict` or `merge_red`): what its next attempt is told."""
    advice = (f"merge the project's commit {onto} into {branch} (`git merge {onto}`), resolve "
              "the conflicts keeping both sides' intent, and finish the feature again"
              if reason == "conflict" else
              f"the project's gate was red on the merge of {branch} into {onto}: merge "
              f"{onto} into your branch, run the checks, fix what fails, and finish again")
    return LastAttemptInfo(failed=True, number=number, ending=f"its feature was done, but "
                           f"{branch} was not merged ({reason}: {_line(why, 300)})",
                           advice=advice)


class AttemptMemory:
    """The newest attempt at each work and at each feature, while it did not succeed; the
    features set aside; and, for the run's first prompt only, how the previous run ended."""

    def __init__(self, previous_run: str = "") -> None:
        self._failed: dict[Work | str, LastAttemptInfo] = {}  # by work, and by feature folder
        self._previous_run = previous_run
        self.set_aside: tuple[str, ...] = ()  # what the prompts say not to take

    def remember(self, work: Work, feature: str | None, info: LastAttemptInfo | None) -> None:
        """After an attempt that counted (a rate-limited one is retried with the same prompt):
        the previous run has been told. A failure is kept under its work and its feature."""
        self._previous_run = ""
        for key in (work, feature):
            if key is None:
                continue
            if info is None:
                self._failed.pop(key, None)
            else:
                self._failed[key] = info

    def recall(self, phase: Phase, kind: PromptKind, feature: str | None) -> LastAttemptInfo:
        """The last attempt on `feature` when the attempt's feature is known at its start (the
        one --feature names or the one in progress), else the last attempt at the same work."""
        key: Work | str = work_of(phase, kind) if feature is None else feature
        info = self._failed.get(key, LastAttemptInfo())._replace(set_aside=self.set_aside)
        previous = self._previous_run
        return info._replace(previous_run=previous) if previous else info


def _listed(items: tuple[str, ...]) -> str:
    shown = ", ".join(_line(item, PATH_CHARS) for item in items[:FAILURES_SHOWN])
    more = len(items) - FAILURES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _line(text: str, limit: int) -> str:
    """One line, capped; a code fence in the agent's text cannot close the prompt's."""
    flat = " ".join(text.split()).replace("```", "ʼʼʼ")
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
