"""A fleet worker: the workflows and the aidd activity on the fleet's task queue, with at most
`slots` aidd runs at once on this machine."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path

from temporalio.client import Client
from temporalio.worker import Worker

from aidd.fleet.activity import BEAT_S, TERM_WAIT_S, ProjectActivities
from aidd.fleet.holders import holders_ended
from aidd.fleet.records import TASK_QUEUE
from aidd.fleet.workflows import PoolWorkflow, ProjectWorkflow


def make_worker(client: Client, slots: int, data_dir: Path,
                environ: Mapping[str, str]) -> Worker:
    activities = ProjectActivities(data_dir, environ)
    return Worker(
        client, task_queue=TASK_QUEUE, workflows=[ProjectWorkflow, PoolWorkflow],
        activities=[activities.run_aidd, holders_ended], max_concurrent_activities=slots,
        # On shutdown each activity SIGTERMs its aidd and waits for it (aidd's 5 s grace).
        graceful_shutdown_timeout=timedelta(seconds=TERM_WAIT_S + 10),
        # Each heartbeat reaches the server within BEAT_S: a stop within ~3 s, status fresh.
        max_heartbeat_throttle_interval=timedelta(seconds=BEAT_S))
