"""The worker's loop in-process on a fake clock: tries and retries, one outcome line per job,
and how long it goes on once aidd is gone; and the real worker process ending at its linger,
in the middle of a delivery."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import psutil

from aidd.notify.send import DeliveryError
from aidd.notify.worker import attempt, serve, watch
from tests.fakes.clock import FakeClock
from tests.localhttp import drip_endpoint


class Endpoint:
    """Fails with each of `failures` in turn, then delivers; each try costs `cost_s`."""

    def __init__(self, clock: FakeClock, *failures: DeliveryError, cost_s: float = 0.0) -> None:
        self.clock, self.failures, self.cost_s = clock, list(failures), cost_s
        self.tries: list[Any] = []

    def __call__(self, job: Mapping[str, Any], env: Mapping[str, str], timeout_s: float) -> None:
        self.tries.append(job.get("id"))
        self.clock.advance(self.cost_s)
        if self.failures:
            raise self.failures.pop(0)


def test_two_retries_a_second_apart_then_the_outcome() -> None:
    clock = FakeClock()
    send = Endpoint(clock, DeliveryError("timed out"), DeliveryError("HTTP 503"))
    assert attempt({"id": 7}, {}, send=send, clock=clock) == {
        "id": 7, "ok": True, "error": None, "tries": 3}
    assert clock.sleeps == [1.0, 1.0]
    send = Endpoint(clock, *[DeliveryError("timed out")] * 5)
    assert attempt({"id": 8}, {}, send=send, clock=clock) == {
        "id": 8, "ok": False, "error": "timed out", "tries": 3}


def test_no_retry_when_it_cannot_help_nor_for_a_periodic_ping() -> None:
    clock = FakeClock()
    send = Endpoint(clock, DeliveryError("HTTP 404", retry=False))
    assert attempt({"id": 1}, {}, send=send, clock=clock)["tries"] == 1
    send = Endpoint(clock, DeliveryError("timed out"))
    assert attempt({"id": 2, "tries": 1}, {}, send=send, clock=clock) == {
        "id": 2, "ok": False, "error": "timed out", "tries": 1}
    assert clock.sleeps == []


def _lines(*jobs: object) -> io.BytesIO:
    return io.BytesIO(b"".join((j if isinstance(j, bytes) else json.dumps(j).encode()) + b"\n"
                               for j in jobs))


def test_each_job_gets_one_outcome_line_and_garbage_is_skipped() -> None:
    clock = FakeClock()
    out = io.BytesIO()
    send = Endpoint(clock, DeliveryError("HTTP 404", retry=False))
    serve(_lines({"id": 1}, b"{not json", [1], {"id": 2}), out, {}, clock, send=send)
    assert [json.loads(line) for line in out.getvalue().splitlines()] == [
        {"id": 1, "ok": False, "error": "HTTP 404", "tries": 1},
        {"id": 2, "ok": True, "error": None, "tries": 1}]


def test_once_aidd_is_gone_the_worker_gets_the_linger_time_then_ends() -> None:
    clock = FakeClock()
    start = clock.monotonic()
    alive = iter([True, True, True, False])
    ended: list[float] = []
    watch(lambda: next(alive), clock, 25.0, lambda: ended.append(clock.monotonic()),
          poll_s=0.5)
    assert clock.sleeps == [0.5, 0.5, 0.5, 25.0]
    assert ended == [start + 26.5]


class Broken(io.BytesIO):
    def write(self, data: Any) -> int:
        raise BrokenPipeError


def test_a_closed_outcome_pipe_does_not_stop_the_deliveries() -> None:
    clock = FakeClock()
    send = Endpoint(clock)
    serve(_lines({"id": 1}, {"id": 2}), Broken(), {}, clock, send=send)
    assert send.tries == [1, 2]


# A stand-in for aidd: starts the worker with a linger of 1 s, hands it the job in argv[1],
# says the worker's pid and ends. The worker is then an orphan in the middle of a delivery.
PARENT = """
import os, subprocess, sys
worker = subprocess.Popen([sys.executable, "-m", "aidd.notify.worker", str(os.getpid()), "1"],
                          stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, start_new_session=True)
worker.stdin.write(sys.argv[1].encode() + b"\\n")
worker.stdin.flush()
print(worker.pid, flush=True)
"""


def _orphaned_worker_ends(job: dict[str, Any]) -> float:
    """Seconds from its parent's end to the worker's."""
    out = subprocess.run([sys.executable, "-c", PARENT, json.dumps({"id": 1, **job})],
                         capture_output=True, check=True, timeout=30)
    worker = psutil.Process(int(out.stdout))
    orphaned_at = time.monotonic()
    try:
        worker.wait(timeout=30)
    except psutil.TimeoutExpired:
        worker.kill()
        raise
    return time.monotonic() - orphaned_at


def test_the_worker_ends_at_its_linger_even_while_an_endpoint_drips() -> None:
    """Issue 27 item 12: a drip-feeding endpoint kept the worker alive long past its linger
    (70 s and more). Each try is bounded by its 5 s deadline now, and the worker ends at
    the linger whatever it is doing."""
    with drip_endpoint() as url:
        took = _orphaned_worker_ends({"kind": "ping", "url": url + "/hb"})
    # the worker's start (~1 s on a loaded machine), its linger (1 s), a look every 0.5 s;
    # its three tries alone would take 17 s
    assert took < 8.0


def test_a_command_still_running_at_the_linger_dies_with_the_worker(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    took = _orphaned_worker_ends({"kind": "command", "command": f"sleep 1000 & echo $! > "
                                  f"{pid_file}; wait", "body": {"trigger": "stuck"}, "title": "t",
                                  "message": "m"})
    assert took < 8.0  # its timeout is 5 s a try, three tries
    assert not _running(int(pid_file.read_text()))


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed orphan stays one until its reaper gets to it)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_failure_nobody_hears_is_kept_in_the_projects_events(tmp_path: Path) -> None:
    """Issue 28 item 8: once aidd ended, a failed delivery is written to events.jsonl by the
    worker, under the run that sent it, for the next --report and --status; one aidd still
    hears is left to aidd (no second line)."""
    (tmp_path / ".automaker").mkdir()
    clock = FakeClock()
    keep = {"root": str(tmp_path), "run": "20261127T080000Z-4242"}
    job = {"id": 3, "trigger": "run_end", "shown": "webhook https://h/…", "keep": keep}
    send = Endpoint(clock, *[DeliveryError("timed out")] * 3)
    serve(_lines(job), io.BytesIO(), {}, clock, send=send, aidd_alive=lambda: True)
    events = tmp_path / ".automaker" / "events.jsonl"
    assert not events.exists()
    send = Endpoint(clock, *[DeliveryError("timed out")] * 3)
    serve(_lines(job), io.BytesIO(), {}, clock, send=send, aidd_alive=lambda: False)
    (record,) = [json.loads(line) for line in events.read_text().splitlines()]
    assert {k: record[k] for k in ("run", "event", "target", "trigger", "error", "tries")} == {
        "run": keep["run"], "event": "notify_failed", "target": "webhook https://h/…",
        "trigger": "run_end", "error": "timed out", "tries": 3}


def test_the_runs_last_notifications_retry_at_once() -> None:
    clock = FakeClock()
    send = Endpoint(clock, *[DeliveryError("connection refused")] * 3)
    assert attempt({"id": 1, "pause_s": 0.05}, {}, send=send, clock=clock)["tries"] == 3
    assert clock.sleeps == [0.05, 0.05]
    send = Endpoint(clock, *[DeliveryError("connection refused")] * 3)
    attempt({"id": 2, "pause_s": 99}, {}, send=send, clock=clock)  # never longer than usual
    assert clock.sleeps[2:] == [1.0, 1.0]
