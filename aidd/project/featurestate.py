"""What a feature file says about its work, read in both vocabularies: aidd's `passes` and
AutoMaker's `status` (issue 18). The one meaning of done, open, in progress, review and blocked
that status, completion, filters, the gate and the reports share; docs/automaker.md maps it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from enum import Enum, unique
from typing import Any

# AutoMaker's board: `verified` is its done column, `completed` its archive; both are done.
DONE_STATUSES = frozenset({"verified", "completed"})
# Done by the agent, waiting for a human review (AutoMaker: `skipTests` features end here).
REVIEW_STATUS = "waiting_approval"
# Work under way: aidd's and AutoMaker's in-progress column, a running agent, a pipeline step.
ACTIVE_STATUSES = frozenset({"in_progress", "running"})
PIPELINE_PREFIX = "pipeline_"
# Statuses AutoMaker or aidd give a meaning; `pipeline_<step>` is valid too. Any other string
# is accepted by AutoMaker (its board shows it in the backlog) and warned about by aidd.
KNOWN_STATUSES = (
    "backlog", "pending", "ready", "in_progress", "running", "waiting_approval", "verified",
    "completed", "failed",
)  # fmt: skip
# What aidd's agent writes when it has verified a feature: AutoMaker's done column.
FINISHED_STATUS = "verified"


@unique
class WorkState(Enum):
    OPEN = "open"  # not started: backlog, pending, ready, failed, missing or unknown status
    ACTIVE = "active"  # started: in_progress, running, pipeline_<step>
    REVIEW = "review"  # waiting_approval: blocks completion until a human decides
    DONE = "done"  # verified or completed; or `passes: true` while in progress (aidd's own)


def work_state(status: Any, passes: Any) -> WorkState:
    """The state of a feature whose `status` and `passes` are these (any JSON values).

    The status decides; `passes: true` makes a started feature done, because aidd's agents
    once wrote `passes: true` with `status: "in_progress"`. A backlog feature claiming
    `passes: true` is not done: AutoMaker shows it in the backlog (see `inconsistent`)."""
    if not isinstance(status, str):
        return WorkState.OPEN
    if status in DONE_STATUSES:
        return WorkState.DONE
    if status == REVIEW_STATUS:
        return WorkState.REVIEW
    if status in ACTIVE_STATUSES or status.startswith(PIPELINE_PREFIX):
        return WorkState.DONE if passes is True else WorkState.ACTIVE
    return WorkState.OPEN


def state_of(data: Any) -> WorkState:
    """The state of a parsed feature.json; anything that is not an object is open."""
    if not isinstance(data, dict):
        return WorkState.OPEN
    return work_state(data.get("status"), data.get("passes"))


def is_done(data: Any) -> bool:
    return state_of(data) is WorkState.DONE


def inconsistent(data: Mapping[str, Any]) -> bool:
    """`passes: true` on a feature whose status says it is not started (both tools count it
    not done). With `waiting_approval` it is consistent: verified, waiting for a human."""
    return data.get("passes") is True and state_of(data) is WorkState.OPEN


def is_known_status(status: str) -> bool:
    return status in KNOWN_STATUSES or (
        status.startswith(PIPELINE_PREFIX) and len(status) > len(PIPELINE_PREFIX)
    )


def blocking(dependencies: Any, done_ids: Collection[str]) -> list[str]:
    """The dependencies that are not done, unknown ids included (AutoMaker's auto mode does not
    start a feature whose dependency it cannot find either)."""
    if not isinstance(dependencies, list):
        return []
    return [d for d in dependencies if isinstance(d, str) and d not in done_ids]


def board_column(status: Any) -> str:
    """Where AutoMaker's board shows a feature that no agent is running: its column, or
    `archive` for `completed`."""
    if not isinstance(status, str) or not status:
        return "backlog"
    if status == "completed":
        return "archive"
    if status in ("in_progress", "waiting_approval", "verified") or status.startswith(
        PIPELINE_PREFIX
    ):
        return status
    return "backlog"
