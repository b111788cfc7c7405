"""The worker's loop in-process on a fake clock: tries and retries, one outcome line per job,
and how long it goes on once aidd is gone."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import Any

from aidd.notify.send import DeliveryError
from aidd.notify.worker import attempt, serve
from tests.fakes.clock import FakeClock


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
    serve(_lines({"id": 1}, b"{not json", [1], {"id": 2}), out, {}, lambda: True, clock,
          send=send)
    assert [json.loads(line) for line in out.getvalue().splitlines()] == [
        {"id": 1, "ok": False, "error": "HTTP 404", "tries": 1},
        {"id": 2, "ok": True, "error": None, "tries": 1}]


def test_once_aidd_is_gone_the_queue_gets_the_linger_time_in_all() -> None:
    clock = FakeClock()
    out = io.BytesIO()
    send = Endpoint(clock, cost_s=10.0)  # a slow endpoint: 10 s each
    serve(_lines(*({"id": n} for n in range(1, 9))), out, {}, lambda: False, clock,
          linger_s=25.0, send=send)
    assert send.tries == [1, 2, 3]  # 0, 10 and 20 s after aidd was found gone


class Broken(io.BytesIO):
    def write(self, data: Any) -> int:
        raise BrokenPipeError


def test_a_closed_outcome_pipe_does_not_stop_the_deliveries() -> None:
    clock = FakeClock()
    send = Endpoint(clock)
    serve(_lines({"id": 1}, {"id": 2}), Broken(), {}, lambda: False, clock, send=send)
    assert send.tries == [1, 2]
