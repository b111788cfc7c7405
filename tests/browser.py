"""A real headless browser for the tests: Debian's chromium, driven over the DevTools protocol
on a pipe (`--remote-debugging-pipe`: JSON messages ended by NUL on fds 3 and 4), so a test
sees every console message, script error and network request of a page, and can take a
screenshot of all of it. Standard library only."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


def _as_fds_3_and_4(reads: int, writes: int) -> None:
    """In the child before exec: the two pipe ends become fds 3 and 4, where chromium looks
    (moved up first, so neither is overwritten by the other); every other fd of ours is
    close-on-exec already (os.pipe and Python's own files are not inheritable)."""
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (reads, writes)]
    os.dup2(high[0], 3)
    os.dup2(high[1], 4)


def find_chromium() -> str | None:
    return next((path for name in CANDIDATES if (path := shutil.which(name))), None)


@dataclass
class PageLoad:
    console: list[dict[str, Any]] = field(default_factory=list)  # level, text
    exceptions: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # every URL the page asked for
    screenshot: bytes = b""
    title: str = ""


class Browser:
    def __init__(self, binary: str, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="aidd-chromium-")
        to_browser, self._write = os.pipe()
        self._read, from_browser = os.pipe()
        self._proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
             "--disable-dev-shm-usage",  # a container's small /dev/shm would crash it
             "--remote-debugging-pipe", f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=False, preexec_fn=lambda: _as_fds_3_and_4(to_browser, from_browser))
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def close(self) -> None:
        with contextlib.suppress(OSError, TimeoutError):  # it may be gone already
            self.send("Browser.close")
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._write)
        os.close(self._read)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """One command; its result (events that arrive meanwhile are kept in `events`)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._receive()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            self.events.append(reply)

    def wait_for(self, method: str) -> dict[str, Any]:
        for i, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(i)
        while True:
            event = self._receive()
            if event.get("method") == method:
                return event
            self.events.append(event)

    def _receive(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._read], [], [], left)[0]:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise OSError("chromium closed its pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return dict(json.loads(message))

    def load(self, page: Path, width: int = 1100) -> PageLoad:
        """Open `page`, wait for its load event, and return what it logged, threw and asked
        for, with a screenshot of the whole page."""
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session)
        self.send("Emulation.setDeviceMetricsOverride", session, width=width, height=800,
                  deviceScaleFactor=1, mobile=False)
        self.send("Page.navigate", session, url=page.absolute().as_uri())
        self.wait_for("Page.loadEventFired")
        height = self.send("Page.getLayoutMetrics", session)["cssContentSize"]["height"]
        self.send("Emulation.setDeviceMetricsOverride", session, width=width,
                  height=int(height), deviceScaleFactor=1, mobile=False)
        shot = self.send("Page.captureScreenshot", session, format="png")["data"]
        title = self.send("Runtime.evaluate", session, expression="document.title")
        return self._collect(session, base64.b64decode(shot),
                             str(title.get("result", {}).get("value", "")))

    def _collect(self, session: str, shot: bytes, title: str) -> PageLoad:
        load = PageLoad(screenshot=shot, title=title)
        for event in self.events:
            if event.get("sessionId") != session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", a.get("description", "")))
                                for a in params.get("args", []))
                load.console.append({"level": params.get("type"), "text": text})
            elif method == "Log.entryAdded":
                entry = params.get("entry", {})
                load.console.append({"level": entry.get("level"), "text": entry.get("text")})
            elif method == "Runtime.exceptionThrown":
                load.exceptions.append(str(params.get("exceptionDetails", {}).get("text")))
            elif method == "Network.requestWillBeSent":
                load.requests.append(str(params.get("request", {}).get("url")))
        return load
