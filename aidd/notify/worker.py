"""The notification worker, a child process of aidd (`python -m aidd.notify.worker`): it reads
jobs from stdin, one JSON line each, delivers each with up to two retries, and writes each
outcome to stdout. A process rather than a thread: a dead endpoint never holds aidd up, not even
at its exit, and what aidd queued last is still delivered after it ended (for LINGER_S, and
not a moment longer)."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from typing import IO, Any

from aidd.clock import Clock, SystemClock
from aidd.notify.send import TIMEOUT_S, DeliveryError, deliver
from aidd.session import proctree

TRIES = 3  # the first try and two retries
RETRY_PAUSE_S = 1.0
LINGER_S = 30.0  # after aidd is gone, jobs still queued get this long, then are dropped
POLL_S = 0.5  # how often the worker looks whether aidd is still there
_KILL_GRACE_S = 1.0
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


def serve(jobs: IO[bytes], outcomes: IO[bytes], env: Mapping[str, str], clock: Clock,
          send: Send = deliver) -> None:
    """Until stdin ends; `watch` ends the process sooner once aidd is gone."""
    while line := jobs.readline(_LINE_LIMIT):
        try:
            job = json.loads(line)
        except ValueError:
            continue
        if isinstance(job, dict):
            _report(outcomes, attempt(job, env, send=send, clock=clock))


def watch(parent_alive: Callable[[], bool], clock: Clock, linger_s: float,
          end: Callable[[], object], poll_s: float = POLL_S) -> None:
    """Once aidd is gone nobody reads the outcomes, and the jobs left get `linger_s` in all: a
    last notification may go out, a dead or dripping endpoint cannot keep us (issue 27 item
    12). Then `end()`, in the middle of a delivery or not."""
    while parent_alive():
        clock.sleep(poll_s)
    clock.sleep(linger_s)
    end()


def _report(outcomes: IO[bytes], outcome: dict[str, Any]) -> None:
    try:
        outcomes.write(json.dumps(outcome).encode() + b"\n")
        outcomes.flush()
    except OSError:  # aidd has gone: the delivery still counts, the report has no reader
        pass


def main(argv: list[str]) -> int:
    """`argv`: aidd's pid (else our parent's now, which may already be another), then the
    linger in seconds (else LINGER_S)."""
    # aidd started us in a session of our own; a terminal's ^C or hang-up is for aidd, whose
    # last notification (run ended: signal) we are still to send.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    proctree.enable_subreaper()  # what a notify command leaves behind is ours to kill
    parent = int(argv[0]) if argv else os.getppid()
    linger_s = float(argv[1]) if len(argv) > 1 else LINGER_S
    threading.Thread(target=watch, args=(lambda: os.getppid() == parent, SystemClock(),
                                         linger_s, _end), name="aidd-linger", daemon=True).start()
    serve(sys.stdin.buffer, sys.stdout.buffer, dict(os.environ), SystemClock())
    return 0


def _end() -> None:
    """The linger is over: a notify command still running dies with its tree, and so do we."""
    scope = proctree.TreeScope()
    proctree.terminate(lambda: scope.snapshot(os.getpid()), grace_s=_KILL_GRACE_S,
                       clock=SystemClock())
    os._exit(0)  # now, whatever the main thread waits for


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
