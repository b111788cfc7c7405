"""The dead-man's switch: `URL/start` when the run starts, `URL` every interval while aidd
lives, `URL/<exit code>` at its end (the convention of cron monitors such as healthchecks.io),
so a monitor outside raises the alarm when aidd or its machine dies, hangs or sleeps; a run
that exits 0 but whose health verdict is failed ends with `URL/fail` (issue 28)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from aidd.notify.targets import shown_url

HEARTBEAT = "heartbeat"  # the trigger name of a ping's outcome


def ping_url(url: str, suffix: str | None = None) -> str:
    """`url` with `/suffix` added to its path; a query stays a query."""
    if suffix is None:
        return url
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/" + suffix))


def ping_job(url: str, suffix: str | None = None) -> dict[str, Any]:
    """A start or end ping is tried three times; a periodic one once (the next comes soon)."""
    return {"kind": "ping", "url": ping_url(url, suffix), "tries": 1 if suffix is None else 3,
            "trigger": HEARTBEAT, "shown": f"heartbeat ping {shown_url(url)}"}


class Heartbeat:
    """Its own thread, which only queues a ping each interval: the worker process sends it."""

    def __init__(self, url: str, interval_s: float,
                 send: Callable[[Mapping[str, Any]], object]) -> None:
        self.url = url
        self.interval_s = interval_s
        self._send = send
        self._stop = threading.Event()

    def start(self) -> None:
        self._send(ping_job(self.url, "start"))
        threading.Thread(target=self._beat, name="aidd-heartbeat", daemon=True).start()

    def finish(self, code: int, failed: bool = False) -> None:
        """A non-zero code is a failure to the monitor already; 0 would read as a success."""
        self._stop.set()
        self._send(ping_job(self.url, "fail" if failed and code == 0 else str(code)))

    def _beat(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._send(ping_job(self.url))
