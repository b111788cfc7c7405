"""Run one attempt in-process against a fake CLI and collect everything it produced."""

from __future__ import annotations

import io
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from aidd.agents.registry import ADAPTERS
from aidd.console import Console
from aidd.events import EventLog, read_events
from aidd.logs.transcript import Transcript
from aidd.session.outcome import SessionOutcome
from aidd.session.request import AttemptRequest
from aidd.session.runner import run_attempt

# Short, test-friendly limits; each test overrides what it checks.
DEFAULTS: dict[str, Any] = {
    "timeout_s": 20.0,
    "idle_timeout_s": 10.0,
    "idle_nudge_s": 0.0,
    "kill_grace_s": 1.0,
    "nudge_text": "No output for a while: report your status.",
    "prompt_kind": "coding",
}
CLI_NAMES = {"opencode": "opencode", "kilocode": "kilo", "claude-code": "claude"}


@dataclass
class AttemptRun:
    outcome: SessionOutcome
    log: bytes
    console: bytes
    events: list[dict[str, Any]]
    elapsed_s: float
    project: Path

    def named(self, event: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == event]

    @property
    def agent_log(self) -> bytes:
        """The log without aidd's own lines (`[aidd`, `» `) (LOG-4)."""
        keep = [
            line for line in self.log.splitlines(keepends=True)
            if not line.startswith((b"[aidd", "» ".encode()))
        ]
        return b"".join(keep)

    @property
    def text(self) -> str:
        return self.log.decode("utf-8", "replace")


@dataclass
class Trigger:
    """Calls `action` from a thread once `ready()` holds, after `delay_s`."""

    ready: Callable[[], bool]
    action: Callable[[], None]
    delay_s: float = 0.0
    _thread: threading.Thread | None = field(default=None, init=False)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        deadline = time.monotonic() + 30
        while not self.ready() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(self.delay_s)
        self.action()

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join(timeout=5)


def run_fake_attempt(
    tmp_path: Path, cli: str, prompt: str = "Do the work.", **overrides: Any
) -> AttemptRun:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    console = io.BytesIO()
    transcript = Transcript(
        tmp_path / "001.log", Console(console), lambda: datetime.now().astimezone(),
        root=tmp_path)
    events = EventLog(tmp_path / "events.jsonl", "test-run")
    adapter = ADAPTERS[cli]
    settings = {**DEFAULTS, **overrides}
    binary = settings.pop("binary", adapter.binary)
    request = AttemptRequest(
        adapter=adapter, binary=binary, project_dir=project, prompt=prompt,
        transcript=transcript, events=events, number=1, env=dict(os.environ), **settings,
    )
    start = time.monotonic()
    try:
        outcome = run_attempt(request)
    finally:
        transcript.close()
    elapsed = time.monotonic() - start
    return AttemptRun(outcome, (tmp_path / "001.log").read_bytes(), console.getvalue(),
                      read_events(events.path), elapsed, project)


# A fake agent script: the agent and a setsid'd, double-forked grandchild ignore SIGTERM; a plain
# child does not. Its pids land in the record files `grandchild` and `child`.
STUBBORN_TREE = [
    {"init": True},
    {"say": "starting a server"},
    {"spawn": ["sleep", "1000"], "detach": True, "ignore": ["TERM"], "pid_file": "grandchild"},
    {"spawn": ["sleep", "1001"], "pid_file": "child"},
    {"ignore": ["TERM"]},
    {"sleep": 60},
]


def pid_alive(pid: int) -> bool:
    """True while `pid` exists, zombies included (a zombie is not yet fully gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
