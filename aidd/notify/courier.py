"""aidd's end of the notification worker (worker.py): `send` puts a job into a bounded queue
and returns at once; one thread writes the queue to the worker's stdin, another reads the
outcomes back and hands each to `on_outcome`. Nothing here blocks the caller."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from typing import IO, Any

from aidd import spawning

QUEUE_SIZE = 64  # jobs waiting for the worker; notifications are rare, pings every minutes
WORKER_GONE = "the notification worker ended"
_REAP_S = 5.0

# (job, delivered, why not, tries)
OnOutcome = Callable[[Mapping[str, Any], bool, str | None, int], None]


class Courier:
    def __init__(self, env: Mapping[str, str], on_outcome: OnOutcome,
                 argv: tuple[str, ...] | None = None) -> None:
        self._env = dict(env)
        self._on_outcome = on_outcome
        # our pid: the worker may start after we are gone, when its parent is another already
        self._argv = argv or (sys.executable, "-m", "aidd.notify.worker", str(os.getpid()))
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue(QUEUE_SIZE)
        self._pending: dict[int, dict[str, Any]] = {}
        self._telling = 0  # outcomes being told (`on_outcome` running) right now
        self._next_id = 0
        self._lock = threading.Condition()
        self._closing = False
        self._closed = False
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """The worker in a session of its own (a terminal's ^C is for aidd); raises OSError."""
        with spawning.LOCK:
            self._proc = subprocess.Popen(
                self._argv, env=self._env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, start_new_session=True)
            spawning.own(self._proc.pid)
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        threading.Thread(target=self._write, args=(self._proc.stdin,), name="aidd-notify-out",
                         daemon=True).start()
        threading.Thread(target=self._read, args=(self._proc.stdout,), name="aidd-notify-in",
                         daemon=True).start()

    def send(self, job: Mapping[str, Any]) -> bool:
        """Queue `job`; False when the queue is full (it is dropped) or the courier closed."""
        with self._lock:
            if self._closing or self._proc is None:
                return False
            self._next_id += 1
            numbered = {**job, "id": self._next_id}
            try:
                self._queue.put_nowait(numbered)
            except queue.Full:
                return False
            self._pending[self._next_id] = numbered
        return True

    def close(self, wait_s: float) -> None:
        """No more jobs: the queue goes to the worker, which finishes it on its own. Outcomes
        are awaited at most `wait_s` seconds; a later one is told while aidd is still there,
        and a failure after aidd ended is kept in events.jsonl by the worker itself."""
        with self._lock:
            self._closing = True
            with contextlib.suppress(queue.Full):  # full: the writer sees `_closing` anyway
                self._queue.put_nowait(None)
            self._lock.wait_for(lambda: not self._pending and not self._telling, timeout=wait_s)
            self._closed = True

    # -- the threads ----------------------------------------------------------------------------
    def _write(self, stdin: IO[bytes]) -> None:
        try:
            while (job := self._queue.get()) is not None:
                stdin.write(json.dumps(job, ensure_ascii=False).encode() + b"\n")
                stdin.flush()
                if self._closing and self._queue.empty():
                    break
        except OSError:
            self._worker_gone()
        finally:
            with contextlib.suppress(OSError):
                stdin.close()  # the end of the queue: the worker finishes it and exits

    def _read(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            try:
                outcome = json.loads(line)
                job_id, ok = outcome["id"], bool(outcome["ok"])
                why, tries = outcome.get("error"), int(outcome.get("tries", 0))
            except (ValueError, KeyError, TypeError):
                continue
            with self._lock:
                job = self._pending.pop(job_id, None)
                self._telling += job is not None
            if job is not None:  # also after `close`, for as long as aidd is there to hear it
                try:
                    self._tell(job, ok, why, tries)
                finally:  # `close` waits for the telling too: a warning without its event
                    with self._lock:  # was seen when aidd exited between the two
                        self._telling -= 1
                        self._lock.notify_all()
        stdout.close()
        self._worker_gone()
        if self._proc is not None:  # it closed its output to exit: reap it
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(_REAP_S)

    def _worker_gone(self) -> None:
        """The worker died (or its pipe broke): what it had not delivered fails."""
        with self._lock:
            lost, self._pending = list(self._pending.values()), {}
            closed = self._closed
            self._lock.notify_all()
        for job in [] if closed else lost:
            self._tell(job, False, WORKER_GONE, 0)

    def _tell(self, job: Mapping[str, Any], ok: bool, why: str | None, tries: int) -> None:
        """Outside the lock: the report may emit an event, whose listeners may send."""
        with contextlib.suppress(Exception):  # a report must never kill the reader thread
            self._on_outcome(job, ok, why, tries)
