"""The notification worker, a child process of aidd (`python -m aidd.notify.worker`): it reads
jobs from stdin, one JSON line each, delivers each with up to two retries, and writes each
outcome to stdout. A process rather than a thread: a dead endpoint never holds aidd up, not even
at its exit, and what aidd queued last is still delivered after it ended (for LINGER_S)."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable, Mapping
from typing import IO, Any

from aidd.clock import Clock, SystemClock
from aidd.notify.send import TIMEOUT_S, DeliveryError, deliver
from aidd.session import proctree

TRIES = 3  # the first try and two retries
RETRY_PAUSE_S = 1.0
LINGER_S = 30.0  # after aidd is gone, jobs still queued get this long, then are dropped
_LINE_LIMIT = 1 << 20

Send = Callable[[Mapping[str, Any], Mapping[str, str], float], None]


def attempt(job: Mapping[str, Any], env: Mapping[str, str], *, send: Send = deliver,
            clock: Clock | None = None, timeout_s: float = TIMEOUT_S,
            pause_s: float = RETRY_PAUSE_S) -> dict[str, Any]:
    """Deliver `job`, trying again after a failure that may pass; its outcome as a record."""
    clock = clock or SystemClock()
    tries = max(1, min(int(job.get("tries", TRIES)), TRIES))
    error = ""
    for done in range(1, tries + 1):
        try:
            send(job, env, timeout_s)
            return {"id": job.get("id"), "ok": True, "error": None, "tries": done}
        except DeliveryError as exc:
            error = exc.why
            if not exc.retry or done == tries:
                break
            clock.sleep(pause_s)
    return {"id": job.get("id"), "ok": False, "error": error, "tries": done}


def serve(jobs: IO[bytes], outcomes: IO[bytes], env: Mapping[str, str],
          parent_alive: Callable[[], bool], clock: Clock, linger_s: float = LINGER_S,
          send: Send = deliver) -> None:
    """Until stdin ends. Once aidd is gone nobody reads the outcomes, and the jobs left get
    `linger_s` in all: a last notification may go out, a dead endpoint cannot keep us."""
    orphaned_at: float | None = None
    while line := jobs.readline(_LINE_LIMIT):
        try:
            job = json.loads(line)
        except ValueError:
            continue
        if orphaned_at is None and not parent_alive():
            orphaned_at = clock.monotonic()
        if orphaned_at is not None and clock.monotonic() - orphaned_at > linger_s:
            return
        if isinstance(job, dict):
            _report(outcomes, attempt(job, env, send=send, clock=clock))


def _report(outcomes: IO[bytes], outcome: dict[str, Any]) -> None:
    try:
        outcomes.write(json.dumps(outcome).encode() + b"\n")
        outcomes.flush()
    except OSError:  # aidd has gone: the delivery still counts, the report has no reader
        pass


def main() -> int:
    # aidd started us in a session of our own; a terminal's ^C or hang-up is for aidd, whose
    # last notification (run ended: signal) we are still to send.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    proctree.enable_subreaper()  # what a notify command leaves behind is ours to kill
    parent = os.getppid()
    serve(sys.stdin.buffer, sys.stdout.buffer, dict(os.environ),
          lambda: os.getppid() == parent, SystemClock())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
