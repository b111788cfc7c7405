"""The workflows: one per project (its id is the project's fleet-wide lock), and one per
credential pool, a durable counting semaphore (the pattern of Temporal's mutex sample: a
requester signals `acquire`, the pool signals `granted` back, the requester signals `release`).

Workflow code runs in Temporal's sandbox and is replayed: no I/O, no clock but workflow.now(),
nothing here but decisions on signals and the activity's results.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from temporalio.converter import value_to_type

    from aidd.fleet.holders import HOLDERS_ENDED
    from aidd.fleet.records import (
        CONFIG_ERROR,
        POOL_WORKFLOW_TYPE,
        WORKFLOW_TYPE,
        PoolState,
        Progress,
        ProjectJob,
        ProjectResult,
        State,
        pool_workflow_id,
    )

RUN_LIMIT = timedelta(days=365)  # aidd has its own --max-wall-time; this only bounds a bug
GRANT_RETRY = timedelta(seconds=5)  # a pool not yet (or no longer) running: ask again
HOLDER_CHECK = timedelta(seconds=10)  # a full pool with waiters: did a holder end unreleased?


def _retry_policy(job: ProjectJob) -> RetryPolicy:
    return RetryPolicy(initial_interval=timedelta(seconds=1), backoff_coefficient=2.0,
                       maximum_interval=timedelta(minutes=5), maximum_attempts=job.max_attempts,
                       non_retryable_error_types=[CONFIG_ERROR])


@workflow.defn(name=WORKFLOW_TYPE)
class ProjectWorkflow:
    """Wait for a slot in the project's pool, run aidd until it ends, give the slot back."""

    def __init__(self) -> None:
        self._granted = False
        self._stop = ""  # "", "graceful" or "now"

    @workflow.signal
    def granted(self) -> None:
        self._granted = True

    @workflow.signal
    def stop(self, mode: str) -> None:
        if mode == "now" or not self._stop:
            self._stop = mode

    @workflow.query
    def stop_mode(self) -> str:
        return self._stop

    @workflow.run
    async def run(self, job: ProjectJob) -> ProjectResult:
        me = workflow.info().workflow_id
        pool = (workflow.get_external_workflow_handle(pool_workflow_id(job.fleet, job.pool))
                if job.pool else None)
        try:
            if pool is not None:
                await self._acquire(pool, job.slots)
            if self._stop:
                return ProjectResult(State.STOPPED, 6, Progress(), "stopped before it started")
            return await self._run(job)
        finally:
            if pool is not None:
                await _signal(pool, "release", me)

    async def _acquire(self, pool: workflow.ExternalWorkflowHandle[Any], slots: int) -> None:
        me = workflow.info().workflow_id
        # One slot: the signal as before `--parallel` (a history replays the same commands).
        while not await _signal(pool, "acquire", *((me,) if slots == 1 else (me, slots))):
            if await self._wait(GRANT_RETRY):
                return
        await workflow.wait_condition(lambda: self._granted or bool(self._stop))

    async def _wait(self, timeout: timedelta) -> bool:
        """Wait up to `timeout` for a stop; True when one came."""
        try:
            await workflow.wait_condition(lambda: bool(self._stop), timeout=timeout)
        except TimeoutError:
            return False
        return True

    async def _run(self, job: ProjectJob) -> ProjectResult:
        handle = workflow.start_activity(
            "run_aidd", job, result_type=ProjectResult, start_to_close_timeout=RUN_LIMIT,
            heartbeat_timeout=timedelta(seconds=job.heartbeat_s),
            retry_policy=_retry_policy(job),
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED)
        await workflow.wait_condition(lambda: handle.done() or bool(self._stop))
        if not handle.done():
            handle.cancel()  # the activity sees it at its next heartbeat and stops aidd
        try:
            result: ProjectResult = await handle
        except ActivityError as err:
            return _failed(err, stopped=bool(self._stop))
        if self._stop and result.state != State.STOPPED:  # aidd ended before the stop reached it
            return replace(result, message=_too_late(result))
        return result


def _failed(err: ActivityError, *, stopped: bool) -> ProjectResult:
    cause = err.cause
    progress = Progress()
    if isinstance(cause, ApplicationError) and cause.details:
        found = value_to_type(Progress, cause.details[0])
        progress = found if isinstance(found, Progress) else progress
    if stopped:
        return ProjectResult(State.STOPPED, 6, progress, "stopped while waiting for a retry")
    message = cause.message if isinstance(cause, ApplicationError) else str(cause or err)
    return ProjectResult(State.FAILED, _exit_in(message), progress, message)


def _too_late(result: ProjectResult) -> str:
    end = f"{result.state.value}{'' if result.exit_code is None else f' (exit {result.exit_code})'}"
    return f"stop requested, not applied: the run ended {end} before the stop took effect" + \
        (f"; {result.message}" if result.message else "")


def _exit_in(message: str) -> int | None:
    """aidd's exit code from the activity's message (`aidd exited 2: ...`)."""
    head = message.removeprefix("aidd exited ")
    digits = head[:3].split(":")[0].split(";")[0].strip()
    return int(digits) if head != message and digits.isdigit() else None


async def _signal(handle: workflow.ExternalWorkflowHandle[Any], name: str,
                  *args: str | int) -> bool:
    """Signal another workflow; False when it is not running (never a failed task)."""
    try:
        await handle.signal(name, args=args)
    except Exception:  # the target is gone or not started yet
        return False
    return True


@workflow.defn(name=POOL_WORKFLOW_TYPE)
class PoolWorkflow:
    """At most `cap` holders; the others wait in order of asking. It lives as long as the
    fleet and continues as new before its history grows long."""

    def __init__(self) -> None:
        self._state = PoolState()

    @workflow.signal
    def acquire(self, requester: str, slots: int = 1) -> None:
        """`slots`: a project with `--parallel N` holds N of the pool's slots at once."""
        if requester in self._state.holders:  # asked again (a replay, a restart): grant again
            self._state.holders.remove(requester)
        if requester not in self._state.queue:
            self._state.queue.append(requester)
        if slots > 1:
            self._state.slots[requester] = slots
        else:
            self._state.slots.pop(requester, None)

    @workflow.signal
    def release(self, requester: str) -> None:
        for waiting in (self._state.holders, self._state.queue):
            if requester in waiting:
                waiting.remove(requester)
        self._state.slots.pop(requester, None)

    @workflow.signal
    def set_cap(self, cap: int) -> None:
        self._state.cap = max(1, cap)

    @workflow.query
    def state(self) -> PoolState:
        return self._state

    @workflow.run
    async def run(self, state: PoolState) -> None:
        self._state = PoolState(cap=max(1, state.cap), holders=list(state.holders),
                                queue=list(state.queue + self._state.queue),
                                slots={**state.slots, **self._state.slots})
        while True:
            await self._until_grantable()
            if _long_history():
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(self._state)
            requester = self._grant()
            handle = workflow.get_external_workflow_handle(requester)
            if not await _signal(handle, "granted"):
                self.release(requester)

    def _grantable(self) -> bool:
        """The first in line fits in what is free, or nobody holds anything (a requester that
        needs more than the cap then holds the pool alone). In order: a big requester first in
        line is not overtaken by small ones (it would starve)."""
        state = self._state
        if not state.queue:
            return False
        return not state.holders or state.held() + state.needs(state.queue[0]) <= state.cap

    def _grant(self) -> str:
        requester = self._state.queue.pop(0)
        self._state.holders.append(requester)
        return requester

    async def _until_grantable(self) -> None:
        """Until a slot can be granted (or the history is long); while the pool is full and
        someone waits, every HOLDER_CHECK it drops the holders whose workflow ended without a
        `release` (terminated from outside)."""
        def ready() -> bool:
            return self._grantable() or _long_history()

        while not ready():
            await workflow.wait_condition(lambda: ready() or bool(self._state.queue))
            if ready():
                return
            if not workflow.patched("pool-holder-check"):  # a history from before the check
                await workflow.wait_condition(ready)
                return
            try:
                await workflow.wait_condition(ready, timeout=HOLDER_CHECK)
            except TimeoutError:
                await self._drop_ended_holders()

    async def _drop_ended_holders(self) -> None:
        asked = list(self._state.holders)
        ended: list[str] = await workflow.execute_local_activity(
            HOLDERS_ENDED, asked, result_type=list[str],
            start_to_close_timeout=timedelta(seconds=30))
        for gone in ended:
            if gone in self._state.holders:  # not re-acquired by a new run meanwhile
                self._state.holders.remove(gone)


def _long_history() -> bool:
    info = workflow.info()
    return info.is_continue_as_new_suggested() or info.get_current_history_length() > 5000
