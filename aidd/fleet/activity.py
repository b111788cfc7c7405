"""The one long activity: plain `aidd` on a project, heartbeating its progress until it ends.

Cancellation (only delivered through heartbeats, so every activity has a heartbeat timeout)
is a stop: the workflow's `stop_mode` says whether it is graceful (`.automaker/.stop`: aidd
ends after its current attempt, 6) or now (SIGTERM: 124). A worker shutting down SIGTERMs its
aidd and fails the attempt, which another worker retries. aidd's exit code decides the rest:
0/73/6/124/9 are results, 2/3/7/8 a configuration error never retried, anything else (1: a
lock held elsewhere, a crash) an error retried by the workflow's policy. A `git` project's
work is committed and pushed after each iteration (`publish`); a push rejected because the
branch moved on stops this stale attempt gracefully (`stopped`, never a force push).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from temporalio import activity
from temporalio.converter import value_to_type
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory, CancelledError

from aidd.clock import SystemClock
from aidd.console import print_out
from aidd.errors import ExitCode
from aidd.fleet import checkout, child
from aidd.fleet.connection import without_credentials
from aidd.fleet.progress import advance, resumed, this_host
from aidd.fleet.publish import Publisher, Publishing
from aidd.fleet.records import (
    CONFIG_ERROR,
    CONFIG_EXITS,
    Progress,
    ProjectJob,
    ProjectResult,
    State,
    state_for_exit,
)
from aidd.fleet.resume import resume_args
from aidd.project.lockfile import lock_holder
from aidd.project.paths import ProjectPaths
from aidd.project.stop import request_stop
from aidd.session import procfs

TERM_WAIT_S = 30.0  # aidd's own kill grace is 5 s; then its process group is killed
# How often the activity looks at events.jsonl and heartbeats, and (the worker's throttle) how
# often a heartbeat reaches the server: a cancellation (a stop) is delivered only in a
# heartbeat's answer, and `aidd fleet status` shows the last heartbeat that arrived. The SDK's
# default throttle, 0.8 x the heartbeat timeout, made both lag up to 24 s (issue 28); one a
# second cost 0.52-0.70 % of a core per waiting project (issue 33's bound is 0.5 %), mostly the
# server's; one every 2 s still ends an agent within 3 s of `stop --now`.
BEAT_S = 2.0
LOCK_WAIT_S = 60.0  # a lost attempt's aidd may still be ending its agent on this machine
RESULT_EXITS = (ExitCode.SUCCESS, ExitCode.ABORTED, ExitCode.BUDGET_EXHAUSTED,
                ExitCode.PROJECT_COMPLETE, ExitCode.TIMEOUT_OR_SIGNAL)
STALE = ("stale: the branch moved on (a newer attempt pushed); this attempt stopped without "
         "overwriting it")


class ProjectActivities:
    """The activities of one worker: its data dir (checkouts, logs) and the environment its
    aidd runs get (the worker's, plus the project's `env`)."""

    def __init__(self, data_dir: Path, environ: Mapping[str, str]) -> None:
        self.data_dir = data_dir
        self.environ = without_credentials(environ)

    @activity.defn(name="run_aidd")
    async def run_aidd(self, job: ProjectJob) -> ProjectResult:
        """One attempt. Its failure is one line on the worker's console and in the status,
        never a traceback (the SDK logs a failure that is not BENIGN with its traceback)."""
        try:
            return await self._attempt(job)
        except CancelledError:  # the SDK's own: its cancellation, not a failure
            raise
        except ApplicationError as err:
            failure = err
        except Exception as err:  # a bug or an OSError: still the project's error, one line
            failure = ApplicationError(f"{err.__class__.__name__}: {err}", type="AttemptError")
        message = " ".join(failure.message.split())
        print_out(f"aidd fleet: {job.name}: attempt {activity.info().attempt} failed: "
                  f"{message}\n")
        raise ApplicationError(message, *failure.details, type=failure.type,
                               non_retryable=failure.non_retryable,
                               category=ApplicationErrorCategory.BENIGN) from None

    async def _attempt(self, job: ProjectJob) -> ProjectResult:
        root = await checkout.prepare(job, self.data_dir)
        progress = resumed(_carried(), root, this_host(self.environ))
        await _wait_for_lock(root, progress)
        # What a lost attempt's aidd wrote after its last heartbeat (here, the same file):
        # the iterations it ended count against this attempt's limits too.
        progress = advance(progress, root)
        progress = replace(progress, started_at=progress.started_at or _now().isoformat(),
                           attempt=activity.info().attempt)
        left = resume_args(job.args, progress, _seconds_since(progress.started_at))
        if left.spent:
            return ProjectResult(state_for_exit(left.exit_code), left.exit_code, progress,
                                 left.spent)
        log = self.data_dir / "logs" / job.fleet / f"{job.name}.log"
        proc = await child.spawn(child.aidd_argv(root, job.cli, left.args), root,
                                 {**self.environ, **job.env}, log)
        progress = replace(progress, pid=proc.pid)
        publisher = Publisher(root, job.branch, job.git) if job.git else None
        pushing = Publishing(publisher, job.name, log, seen=progress.ended)
        try:
            progress = await _watch(proc, root, progress, _tick(job), pushing)
        except asyncio.CancelledError:
            _uncancel()
            progress = await _stop(proc, root, progress, _tick(job), pushing)
        progress = await pushing.at_end(progress)
        code = int(proc.returncode if proc.returncode is not None else 1)
        if pushing.stale:
            return ProjectResult(State.STOPPED, code, progress, STALE)
        return _judge(job, code, progress)


def _tick(job: ProjectJob) -> float:
    """Heartbeat well inside the timeout, at least every BEAT_S."""
    return max(0.2, min(BEAT_S, job.heartbeat_s / 4))


def _now() -> datetime:
    return SystemClock().now()


def _seconds_since(moment: str) -> float:
    """Seconds since the run's first attempt started aidd (the run's wall time so far)."""
    try:
        return (_now() - datetime.fromisoformat(moment)).total_seconds()
    except (TypeError, ValueError):  # details of another version
        return 0.0


def _carried() -> Progress | None:
    """The last attempt's heartbeat (on any worker), None for the first attempt."""
    details = activity.info().heartbeat_details
    with contextlib.suppress(Exception):  # details of another version: start afresh
        if details:
            found = value_to_type(Progress, details[0])
            if isinstance(found, Progress):
                return found
    return None


async def _wait_for_lock(root: Path, progress: Progress) -> None:
    """While a live aidd holds the project's lock (the lost attempt's, still ending its agent
    after its worker died), wait; past LOCK_WAIT_S aidd itself reports the lock (exit 1)."""
    paths, clock = ProjectPaths(root), SystemClock()
    deadline = clock.monotonic() + LOCK_WAIT_S
    while clock.monotonic() < deadline:
        if not lock_holder(paths.root, paths.lock, procfs).alive:
            return
        activity.heartbeat(replace(progress, last_event="waiting_for_lock"))
        await asyncio.sleep(0.5)


async def _watch(proc: asyncio.subprocess.Process, root: Path, progress: Progress,
                 tick: float, pushing: Publishing) -> Progress:
    """Heartbeat the progress until aidd ends, publishing a git project's work after each
    iteration (exactly as it ended: its checkpoint's tree, so the look need not be quick; a
    look every 0.25 s measured 3 % of a core with 20 projects; one per BEAT_S is a quarter of
    those looks); a worker shutting down stops aidd, publishes, and fails the attempt."""
    while True:
        progress = await _beating(pushing.after_iteration, advance(progress, root), tick)
        activity.heartbeat(progress)
        if activity.is_worker_shutdown():
            child.terminate(proc)
            await _reap(proc, progress, tick)
            await pushing.at_end(advance(progress, root))
            raise ApplicationError("the worker shut down; another worker resumes the run",
                                   category=ApplicationErrorCategory.BENIGN)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), tick)
            return advance(progress, root)


async def _stop(proc: asyncio.subprocess.Process, root: Path, progress: Progress,
                tick: float, pushing: Publishing) -> Progress:
    """Cancelled: `.stop` (graceful) or SIGTERM (now), then wait for aidd, heartbeating; a
    graceful stop becomes SIGTERM when `aidd fleet stop --now` follows it."""
    now = await _stop_now()
    if not now:
        paths = ProjectPaths(root)
        request_stop(paths.root, paths.stop, SystemClock().now())
    termed = False
    while proc.returncode is None:
        if now and not termed:
            child.terminate(proc)
            termed = True
        progress = await _beating(pushing.after_iteration, advance(progress, root), tick)
        activity.heartbeat(progress)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), tick)
        now = now or (proc.returncode is None and await _stop_now())
    return advance(progress, root)


async def _beating(step: Callable[[Progress], Awaitable[Progress]], progress: Progress,
                   tick: float) -> Progress:
    """`step(progress)` (a commit and a push: slow on a slow network), heartbeating meanwhile
    so the server does not count the worker as lost."""
    task = asyncio.ensure_future(step(progress))
    while not task.done():
        activity.heartbeat(progress)
        await asyncio.wait({task}, timeout=tick)
    return task.result()


async def _stop_now() -> bool:
    """Ask the workflow how to stop; graceful when it cannot tell."""
    workflow_id = activity.info().workflow_id or ""
    try:
        handle = activity.client().get_workflow_handle(workflow_id)
        return bool(await asyncio.wait_for(handle.query("stop_mode"), 10) == "now")
    except Exception:  # any failure to ask means the gentle way
        return False


async def _reap(proc: asyncio.subprocess.Process, progress: Progress, tick: float) -> None:
    clock = SystemClock()
    deadline = clock.monotonic() + TERM_WAIT_S
    while proc.returncode is None and clock.monotonic() < deadline:
        activity.heartbeat(progress)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), tick)
    if proc.returncode is None:
        child.kill_group(proc)
        await proc.wait()


def _uncancel() -> None:
    """The cancellation is handled here (the stop): later waits must not see it again."""
    task = asyncio.current_task()
    if task is not None:
        while task.uncancel():
            pass


def _judge(job: ProjectJob, code: int, progress: Progress) -> ProjectResult:
    if code in RESULT_EXITS:
        return ProjectResult(state_for_exit(code), code, progress)
    log = f"its output: the worker's {job.fleet}/{job.name}.log"
    # Benign: an outcome `aidd fleet status` reports, not a worker's fault worth a traceback.
    if code in CONFIG_EXITS:
        raise ApplicationError(f"aidd exited {code}: a configuration error, not retried; {log}",
                               progress, type=CONFIG_ERROR, non_retryable=True,
                               category=ApplicationErrorCategory.BENIGN)
    raise ApplicationError(f"aidd exited {code}; {log}", progress, type="AiddExit",
                           category=ApplicationErrorCategory.BENIGN)

