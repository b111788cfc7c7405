"""The notification worker, a child process of aidd (`python -m aidd.notify.worker`): it reads
jobs from stdin, one JSON line each, delivers each with up to two retries, and writes each
outcome to stdout. A process rather than a thread: a dead endpoint never holds aidd up, not even
at its exit, and what aidd queued last is still delivered after it ended (for LINGER_S, and
not a moment longer)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

from aidd.clock import Clock, SystemClock
from aidd.events import EventLog
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
    """Deliver `job`, trying again after a failure that may pass; its outcome as a record.
    The run's last notifications ask for a shorter pause (`pause_s` in the job, at most the
    usual one): a refused connection is then known within aidd's short wait at its end."""
    clock = clock or SystemClock()
    tries = max(1, min(int(job.get("tries", TRIES)), TRIES))
    asked = job.get("pause_s")
    if isinstance(asked, int | float) and not isinstance(asked, bool) and 0 <= asked < pause_s:
        pause_s = float(asked)
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
          send: Send = deliver, aidd_alive: Callable[[], bool] = lambda: True) -> None:
    """Until stdin ends; `watch` ends the process sooner once aidd is gone. A failure nobody
    hears any more (aidd ended) is kept in the project's events.jsonl, for the next `--report`
    and `--status` (issue 28 item 8)."""
    while line := jobs.readline(_LINE_LIMIT):
        try:
            job = json.loads(line)
        except ValueError:
            continue
        if not isinstance(job, dict):
            continue
        outcome = attempt(job, env, send=send, clock=clock)
        heard = _report(outcomes, outcome) and aidd_alive()
        if not outcome["ok"] and not heard:
            keep_failure(job, outcome, clock)


def watch(parent_alive: Callable[[], bool], clock: Clock, linger_s: float,
          end: Callable[[], object], poll_s: float = POLL_S) -> None:
    """Once aidd is gone nobody reads the outcomes, and the jobs left get `linger_s` in all: a
    last notification may go out, a dead or dripping endpoint cannot keep us (issue 27 item
    12). Then `end()`, in the middle of a delivery or not."""
    while parent_alive():
        clock.sleep(poll_s)
    clock.sleep(linger_s)
    end()


def _report(outcomes: IO[bytes], outcome: dict[str, Any]) -> bool:
    """False when aidd has gone: the delivery still counts, the report has no reader."""
    try:
        outcomes.write(json.dumps(outcome).encode() + b"\n")
        outcomes.flush()
    except OSError:
        return False
    return True


def keep_failure(job: Mapping[str, Any], outcome: Mapping[str, Any], clock: Clock) -> None:
    """`notify_failed` in the project's events.jsonl, under the run that sent `job` (its
    `keep`: the project and the run), as aidd would have written it; never fatal."""
    keep = job.get("keep")
    if not isinstance(keep, dict):
        return
    root, run = keep.get("root"), keep.get("run")
    if not (isinstance(root, str) and isinstance(run, str)):
        return
    events = EventLog(Path(root) / ".automaker" / "events.jsonl", run, root=Path(root),
                      clock=clock)
    with contextlib.suppress(OSError):  # a full disk, a planted link: nothing to tell
        events.emit("notify_failed", target=str(job.get("shown")),
                    trigger=str(job.get("trigger")), error=str(outcome.get("error")),
                    tries=int(outcome.get("tries") or 0))
    events.close()


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
    serve(sys.stdin.buffer, sys.stdout.buffer, dict(os.environ), SystemClock(),
          aidd_alive=lambda: os.getppid() == parent)
    return 0


def _end() -> None:
    """The linger is over: a notify command still running dies with its tree, and so do we."""
    scope = proctree.TreeScope()
    proctree.terminate(lambda: scope.snapshot(os.getpid()), grace_s=_KILL_GRACE_S,
                       clock=SystemClock())
    os._exit(0)  # now, whatever the main thread waits for


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
