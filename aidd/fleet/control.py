"""The client's side: start or resume a fleet's workflows, read every project's state from the
server (no worker needed: a running project's progress is its activity's last heartbeat, an
ended one's its workflow result), and ask projects to stop."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
)
from temporalio.common import WorkflowIDReusePolicy
from temporalio.converter import value_to_type
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from aidd.fleet.connection import Target, unreachable
from aidd.fleet.records import (
    TASK_QUEUE,
    WORKFLOW_TYPE,
    PoolState,
    Progress,
    ProjectJob,
    ProjectResult,
    State,
    pool_workflow_id,
    project_workflow_id,
)
from aidd.fleet.server import ServerError
from aidd.fleet.spec import Fleet
from aidd.fleet.workflows import PoolWorkflow, ProjectWorkflow

RECONNECT_S = 1.0
STARTING_WAIT_S = 60.0
_STARTING = "Frontend is not healthy yet"  # the server's answer while it starts
# Projects asked at once by a status query: 20 waiting projects one by one took 17.1 ms of CPU
# and 99 ms, together 10.8 ms and 57 ms (fewer turns of the event loop); a bound for big fleets.
CONCURRENT_ASKS = 16
UNTOLD = "the server could not tell"  # an ended run's row when its result could not be read


@dataclass(frozen=True)
class Row:
    """One project in `aidd fleet status`."""

    fleet: str
    project: str
    state: State
    progress: Progress = field(default_factory=Progress)
    exit_code: int | None = None
    message: str = ""
    started: str = ""  # when the workflow run started (ISO): the window of its aidd runs

    @property
    def workflow_id(self) -> str:
        return project_workflow_id(self.fleet, self.project)


async def connect(target: Target) -> Client:
    """A client of the server; while the server says its frontend is starting (a local server
    just started, on a loaded machine: measured), ask again for up to STARTING_WAIT_S. A server
    that cannot be reached is one line (exit 1), not the SDK's transport dump."""
    deadline = asyncio.get_running_loop().time() + STARTING_WAIT_S
    while True:
        try:
            return await Client.connect(target.address, namespace=target.namespace,
                                        **target.options)
        except RuntimeError as err:
            if _STARTING not in str(err) or asyncio.get_running_loop().time() > deadline:
                raise ServerError(unreachable(target, err)) from None
        await asyncio.sleep(RECONNECT_S / 2)


async def start_fleet(client: Client, fleet: Fleet) -> list[tuple[ProjectJob, bool]]:
    """Every pool, then every project's workflow; (job, True) when started now, False when it
    was running already (resumed: its workers pick it up)."""
    for name, cap in fleet.pools.items():
        await _ensure_pool(client, fleet.name, name, cap)
    started = []
    for job in fleet.projects:
        try:
            await client.start_workflow(
                ProjectWorkflow.run, job, id=job.workflow_id, task_queue=TASK_QUEUE,
                id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE)
            started.append((job, True))
        except WorkflowAlreadyStartedError:
            started.append((job, False))
    return started


async def _ensure_pool(client: Client, fleet: str, pool: str, cap: int) -> None:
    workflow_id = pool_workflow_id(fleet, pool)
    try:
        await client.start_workflow(PoolWorkflow.run, PoolState(cap=cap), id=workflow_id,
                                    task_queue=TASK_QUEUE)
    except WorkflowAlreadyStartedError:  # running: the fleet file may have a new cap
        await client.get_workflow_handle(workflow_id).signal(PoolWorkflow.set_cap, cap)


async def wait_for(client: Client, jobs: Iterable[ProjectJob]) -> list[Row]:
    """Each project's end, as its workflow returns it; through a server restart."""
    return list(await asyncio.gather(*(_outlasting(client.get_workflow_handle(job.workflow_id),
                                                   job.fleet, job.name) for job in jobs)))


async def _outlasting(handle: WorkflowHandle[object, object], fleet: str, project: str) -> Row:
    """`_ended`, asked again while the server cannot be reached (restarting, network loss)."""
    while True:
        try:
            return await _ended(handle, fleet, project, reraise=True)
        except RPCError:
            await asyncio.sleep(RECONNECT_S)


@dataclass
class Known:
    """What a status query asked again and again (`aidd fleet watch`, every 2 s) need not ask
    or decode again: an ended run's row (by workflow id and start: it no longer changes) and
    each running project's last heartbeat as decoded (a waiting project's repeats). Only the
    latest query's are kept."""

    ended: dict[tuple[str, datetime], Row] = field(default_factory=dict)
    heartbeats: dict[str, tuple[bytes, Progress]] = field(default_factory=dict)


async def fleet_status(client: Client, fleet: str | None = None,
                       known: Known | None = None) -> list[Row]:
    """Every project's latest run on the server (of one fleet, or of all)."""
    latest: dict[str, tuple[datetime, WorkflowExecutionStatus | None]] = {}
    async for execution in client.list_workflows(f"WorkflowType = '{WORKFLOW_TYPE}'"):
        previous = latest.get(execution.id)
        if previous is None or execution.start_time > previous[0]:
            latest[execution.id] = (execution.start_time, execution.status)
    before, now = known or Known(), Known()
    chosen = [(w, *latest[w]) for w in sorted(latest)
              if fleet is None or w.removeprefix("aidd-fleet/").partition("/")[0] == fleet]
    asks = asyncio.Semaphore(CONCURRENT_ASKS)
    got = await asyncio.gather(*(_latest(client, w, started, state, (before, now), asks)
                                 for w, started, state in chosen), return_exceptions=True)
    failed = next((item for item in got if isinstance(item, BaseException)), None)
    if failed is not None:  # as when asked one by one: the first failure, every ask ended
        raise failed
    if known is not None:
        known.ended, known.heartbeats = now.ended, now.heartbeats
    return [row for row in got if isinstance(row, Row)]


async def _latest(client: Client, workflow_id: str, started: datetime,
                  state: WorkflowExecutionStatus | None, known: tuple[Known, Known],
                  asks: asyncio.Semaphore) -> Row:
    """The row of a project's latest run, asked beside the others' (CONCURRENT_ASKS)."""
    fleet, _, project = workflow_id.removeprefix("aidd-fleet/").partition("/")
    handle = client.get_workflow_handle(workflow_id)
    before, now = known
    async with asks:
        if state == WorkflowExecutionStatus.RUNNING:
            row = await _running(client, handle, fleet, project, known)
        else:
            row = before.ended.get((workflow_id, started)) or await _ended(handle, fleet,
                                                                           project)
            if row.message != UNTOLD:  # else asked again next time
                now.ended[(workflow_id, started)] = row
    return replace(row, started=started.isoformat())


async def _running(client: Client, handle: WorkflowHandle[object, object], fleet: str,
                   project: str, known: tuple[Known, Known]) -> Row:
    described = await handle.describe()
    pending = list(described.raw_description.pending_activities)
    if not pending:
        return Row(fleet, project, State.QUEUED)
    activity = pending[0]
    progress = await _heartbeat(client, handle.id, activity.heartbeat_details.payloads, known)
    waiting = activity.state == PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED
    if waiting and activity.attempt > 1:
        message = activity.last_failure.message if activity.HasField("last_failure") else ""
        return Row(fleet, project, State.RETRYING, progress, message=message)
    return Row(fleet, project, State.RUNNING if not waiting else State.QUEUED, progress)


async def _heartbeat(client: Client, workflow_id: str, payloads: Sequence[Payload],
                     known: tuple[Known, Known]) -> Progress:
    """The activity's last heartbeat as a Progress (empty before the first)."""
    before, now = known
    raw = b"".join(payload.SerializeToString() for payload in payloads)
    last = before.heartbeats.get(workflow_id)
    if last is not None and last[0] == raw:
        now.heartbeats[workflow_id] = last
        return last[1]
    progress = Progress()
    if payloads:
        decoded = await client.data_converter.decode(payloads, [Progress])
        progress = decoded[0] if decoded and isinstance(decoded[0], Progress) else progress
    now.heartbeats[workflow_id] = (raw, progress)
    return progress


async def _ended(handle: WorkflowHandle[object, object], fleet: str, project: str,
                 reraise: bool = False) -> Row:
    try:
        raw = await handle.result()
    except WorkflowFailureError as err:
        return Row(fleet, project, State.FAILED, message=str(err.cause or err))
    except RPCError:
        if reraise:
            raise
        return Row(fleet, project, State.FAILED, message=UNTOLD)
    except Exception as err:  # terminated, cancelled, timed out
        return Row(fleet, project, State.FAILED, message=err.__class__.__name__)
    result = value_to_type(ProjectResult, raw) if not isinstance(raw, ProjectResult) else raw
    return Row(fleet, project, result.state, result.progress, result.exit_code, result.message)


async def stop_projects(client: Client, rows: Iterable[Row], now: bool) -> list[Row]:
    """Signal `stop` to each running project of `rows`; the ones signalled (not one that
    ended between the look and the signal)."""
    asked = []
    for row in rows:
        if row.state in (State.QUEUED, State.RUNNING, State.RETRYING):
            handle = client.get_workflow_handle(row.workflow_id)
            try:
                await handle.signal(ProjectWorkflow.stop, "now" if now else "graceful")
            except RPCError as err:
                if err.status != RPCStatusCode.NOT_FOUND:
                    raise
                continue
            asked.append(row)
    return asked

