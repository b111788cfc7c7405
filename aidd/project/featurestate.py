"""What a feature file says about its work, read in both vocabularies: AutoMaker's `status`,
and aidd's first `passes` where there is no status (issues 18, 31). The one meaning of done,
open, in progress, review and blocked that status, completion, filters, the gate and the
reports share; docs/automaker.md maps it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from enum import Enum, unique
from typing import Any

# AutoMaker's board: `verified` is its done column, `completed` its archive; both are done.
DONE_STATUSES = frozenset({"verified", "completed"})
# Done by the agent, waiting for a human review (AutoMaker: `skipTests` features end here).
REVIEW_STATUS = "waiting_approval"
# A failed agent run: AutoMaker's auto mode does not pick it again; a person decides (issue 31).
FAILED_STATUS = "failed"
# Work under way: the In Progress column, or a pipeline step. `running` is not one: the board
# has no such column and shows it in the Backlog (issue 31 item 3).
ACTIVE_STATUS = "in_progress"
PIPELINE_PREFIX = "pipeline_"
# What aidd's agent may pick, as AutoMaker's auto mode picks `pending` and `ready` (issue 31
# item 4); a missing or empty status too. `running` belongs to another agent, `pipeline_*` to
# the pipeline, an unknown string to whoever wrote it.
WORKABLE_STATUSES = frozenset({"backlog", "pending", "ready", ACTIVE_STATUS})
# Statuses AutoMaker or aidd give a meaning; `pipeline_<step>` is valid too. Any other string
# is accepted by AutoMaker (its board shows it in the backlog) and warned about by aidd.
KNOWN_STATUSES = frozenset((
    "backlog", "pending", "ready", "in_progress", "running", "waiting_approval", "verified",
    "completed", "failed",
))  # fmt: skip
# What aidd's agent writes when it has verified a feature: AutoMaker's done column.
FINISHED_STATUS = "verified"


@unique
class WorkState(Enum):
    OPEN = "open"  # not started: backlog, pending, ready, running, missing or unknown status
    ACTIVE = "active"  # started: in_progress, pipeline_<step>
    REVIEW = "review"  # waiting_approval: blocks completion until a human decides
    WAITING = "waiting"  # failed: waits for a person, as waiting_approval does
    DONE = "done"  # verified or completed; or `passes: true` without a status


_BY_STATUS = {
    **dict.fromkeys(DONE_STATUSES, WorkState.DONE),
    REVIEW_STATUS: WorkState.REVIEW,
    FAILED_STATUS: WorkState.WAITING,
    ACTIVE_STATUS: WorkState.ACTIVE,
}


def work_state(status: Any, passes: Any) -> WorkState:
    """The state of a feature whose `status` and `passes` are these (any JSON values).

    The status decides whenever there is one (issue 31 item 1): AutoMaker reopens a feature by
    writing only its status and never clears `passes`, so `passes: true` makes a feature done
    only where the status is missing or empty (aidd's first vocabulary)."""
    if status is None or status == "":
        return WorkState.DONE if passes is True else WorkState.OPEN
    if not isinstance(status, str):
        return WorkState.OPEN
    if status.startswith(PIPELINE_PREFIX):
        return WorkState.ACTIVE
    return _BY_STATUS.get(status, WorkState.OPEN)


def state_of(data: Any) -> WorkState:
    """The state of a parsed feature.json; anything that is not an object is open."""
    if not isinstance(data, dict):
        return WorkState.OPEN
    return work_state(data.get("status"), data.get("passes"))


def is_done(data: Any) -> bool:
    return state_of(data) is WorkState.DONE


def is_workable(status: Any) -> bool:
    """aidd's agent may pick a not-done feature with this status (auto mode's set)."""
    return status is None or status == "" or status in WORKABLE_STATUSES


def inconsistent(data: Mapping[str, Any]) -> bool:
    """`passes: true` on a feature whose status says it is not started (both tools count it
    not done). With `waiting_approval` it is consistent: verified, waiting for a human."""
    return data.get("passes") is True and state_of(data) is WorkState.OPEN


def ambiguous_pass(data: Mapping[str, Any]) -> bool:
    """`passes: true` on a started feature: reopened on the board (AutoMaker keeps `passes`),
    or finished by an earlier aidd that wrote `passes` and no done status."""
    return data.get("passes") is True and state_of(data) is WorkState.ACTIVE


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
