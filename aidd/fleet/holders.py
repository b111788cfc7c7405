"""Which of a pool's holders ended without giving their slot back: a project workflow
terminated from outside (`temporal workflow terminate`, a timeout) runs no `finally`, so its
`release` never comes. The pool asks this (a local activity: workflow code does no I/O) while
it is full and someone waits, the way Temporal's mutex samples look up a holder's status."""

from __future__ import annotations

from temporalio import activity
from temporalio.client import WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

HOLDERS_ENDED = "pool_holders_ended"


@activity.defn(name=HOLDERS_ENDED)
async def holders_ended(holders: list[str]) -> list[str]:
    """The holders whose workflow is no longer running (ended, or unknown to the server)."""
    client = activity.client()
    ended = []
    for workflow_id in holders:
        try:
            described = await client.get_workflow_handle(workflow_id).describe()
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                ended.append(workflow_id)
            continue  # the server could not tell: keep it, ask again later
        if described.status != WorkflowExecutionStatus.RUNNING:
            ended.append(workflow_id)
    return ended
