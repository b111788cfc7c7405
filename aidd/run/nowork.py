"""No-work detection (issue 15): an attempt that succeeded without a tool call, without a change
to the project and with hardly any text did nothing; it becomes result 75, a failure."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from aidd.project.checkpoints import Checkpoint
from aidd.project.fingerprint import fingerprint, metadata_fingerprint
from aidd.run.journal import Journal
from aidd.session.outcome import Outcome, Reason, SessionOutcome

# Less assistant text than this, with no tool call and no change, is no work. "Done.", "Nothing
# left to do." or a refusal run to tens of characters; an answer or a plan that is itself the
# work (a review that explains what it found) runs to several hundred. 300 is about three
# sentences: above every empty reply, below any real one.
SMALL_TEXT_CHARS = 300


class Before(NamedTuple):
    """The project before the attempt: checkpoint NNN's tree, or (checkpoints off or failing)
    the two fingerprints a later look compares."""

    tree: str | None = None
    fingerprint: str | None = None
    metadata: str | None = None


def look_before(root: Path, environ: Mapping[str, str], start: Checkpoint | None,
                stuck_fingerprint: str | None) -> Before:
    """Free with checkpoints (the `NNN` and `NNN-end` trees are compared); without them, the
    stuck fingerprint when one was taken (the one carried from the last stuck check predates
    the copy-list sync: what sync writes then reads as a change, never as no work)."""
    if start is not None:
        return Before(tree=start.tree)
    return Before(fingerprint=stuck_fingerprint or fingerprint(root, environ),
                  metadata=metadata_fingerprint(root))


def candidate(outcome: SessionOutcome) -> bool:
    """A success whose output shows (JSON events were seen) no tool call and little text; only
    then is the project looked at. opencode's "exit 1 treated as success" is the CLI saying
    there is nothing more to do (EXIT-3): an answer aidd already reads, not judged again."""
    return (outcome.outcome is Outcome.SUCCESS and outcome.reason is not Reason.EXIT1_SUCCESS
            and outcome.tool_calls == 0 and outcome.assistant_chars < SMALL_TEXT_CHARS)


def unchanged(root: Path, environ: Mapping[str, str], before: Before,
              end: Checkpoint | None) -> bool:
    """The project holds the same files as before; unknown (the `NNN-end` checkpoint failed)
    counts as changed, so no work is never guessed."""
    if before.tree is not None:
        return end is not None and end.tree == before.tree
    return (fingerprint(root, environ) == before.fingerprint
            and metadata_fingerprint(root) == before.metadata)


def judge(root: Path, environ: Mapping[str, str], journal: Journal, outcome: SessionOutcome,
          before: Before, end: Checkpoint | None) -> SessionOutcome:
    """The attempt's outcome, as result 75 when it did no work, said in one line."""
    if not (candidate(outcome) and unchanged(root, environ, before, end)):
        return outcome
    ended = "exited 0" if outcome.exit_status == 0 else "ended"
    journal.say(f"no work: the agent {ended} without a tool call or a change "
                f"({outcome.assistant_chars} characters of text)", level="WARN")
    return outcome.as_no_work()
