"""A night written the way aidd writes it, for the morning report's tests: events.jsonl on a
fake clock, real checkpoints (aidd's CheckpointStore) around each attempt, feature files the
"agent" changes, and commits the agent makes, stamped with the fake time."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aidd.events import EventLog
from aidd.project.checkpoints import CheckpointStore
from aidd.project.paths import ProjectPaths
from tests.fakes.clock import FakeClock

START = datetime(2026, 11, 24, 22, 0, tzinfo=UTC)
SINCE = "2026-11-24T21:59:00Z"  # a window holding the whole of `rich_night`
TOKENS = {"input": 1000, "output": 200, "reasoning": 0, "cache_read": 50, "cache_write": 0}


def feature_text(name: str, passes: bool, title: str | None = None, note: str = "") -> str:
    return json.dumps({"id": name, "category": "Core", "title": title or name.title(),
                       "description": f"{name} works", "status": "completed" if passes
                       else "in_progress", "passes": passes, "notes": note}, indent=2)


@dataclass
class Night:
    root: Path
    git_project: bool = True
    checkpoints: bool = True
    clock: FakeClock = field(default_factory=lambda: FakeClock(START))
    number: int = 0
    run_id: str = ""
    started: datetime = START
    log: EventLog | None = None
    store: CheckpointStore | None = None

    def __post_init__(self) -> None:
        (self.root / ".automaker" / "features").mkdir(parents=True, exist_ok=True)
        if self.git_project:
            self.git("init", "-q")
            (self.root / "README.md").write_text("project\n")
            self.commit("initial")

    @property
    def paths(self) -> ProjectPaths:
        return ProjectPaths(self.root)

    def git(self, *args: str) -> str:
        stamp = f"{int(self.clock.now().timestamp())} +0000"
        env = {**os.environ, "GIT_AUTHOR_NAME": "agent", "GIT_AUTHOR_EMAIL": "a@x",
               "GIT_COMMITTER_NAME": "agent", "GIT_COMMITTER_EMAIL": "a@x",
               "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        return subprocess.run(["git", *args], cwd=self.root, env=env, capture_output=True,
                              text=True, check=True).stdout.strip()

    def commit(self, subject: str) -> str:
        self.git("add", "-A", "--", ".", ":(exclude).automaker")
        self.git("commit", "-q", "--allow-empty", "-m", subject)
        return self.git("rev-parse", "HEAD")

    def emit(self, event: str, **fields: Any) -> None:
        assert self.log is not None
        self.log.emit(event, **fields)

    def start_run(self, pid: int = 4242) -> str:
        self.started = self.clock.now()
        self.run_id = self.started.strftime("%Y%m%dT%H%M%SZ") + f"-{pid}"
        self.log = EventLog(self.paths.events, self.run_id, root=self.root, clock=self.clock)
        self.store = CheckpointStore(self.root, self.run_id, os.environ)
        self.emit("run_start", pid=pid, cli="opencode")
        return self.run_id

    def write_feature(self, name: str, passes: bool, title: str | None = None) -> None:
        folder = self.root / ".automaker" / "features" / name
        folder.mkdir(parents=True, exist_ok=True)
        file = folder / "feature.json"
        file.write_text(feature_text(name, passes, title, f"attempt {self.number}"))
        stamp = self.clock.now().timestamp()  # written during the night, not when the test ran
        os.utime(file, (stamp, stamp))

    def _checkpoint(self, label: str) -> None:
        if not self.checkpoints:
            return
        assert self.store is not None
        point = self.store.record(label)
        self.emit("checkpoint", number=self.number, label=label, ref=point.ref,
                  commit=point.commit, files=point.files, head=point.head, duration_s=0.01)

    def attempt(self, result: int = 0, *, outcome: str | None = None, reason: str = "exit_status",
                seconds: float = 600, features: dict[str, bool] | None = None,
                files: dict[str, str] | None = None, commit: str | None = None,
                cost: float | None = 0.5, estimated: bool | None = None,
                tokens: dict[str, int] | None = None, kind: str = "coding",
                gap: float = 5) -> int:
        self.number += 1
        self.emit("iteration_start", number=self.number, kind=kind)
        self._checkpoint(f"{self.number:03d}")
        self.clock.advance(seconds / 2)
        for name, passes in (features or {}).items():
            self.write_feature(name, passes)
        for rel, text in (files or {}).items():
            (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.root / rel).write_text(text)
        if commit is not None:
            self.commit(commit)
        self.clock.advance(seconds / 2)
        self._checkpoint(f"{self.number:03d}-end")
        fields: dict[str, Any] = {"cost_estimated": estimated} if estimated is not None else {}
        self.emit("iteration_end", number=self.number, result=result,
                  outcome=outcome or ("success" if result == 0 else "failure"), reason=reason,
                  duration_s=seconds, tokens=TOKENS if tokens is None else tokens,
                  cost_usd=cost, **fields)
        self.clock.advance(gap)
        return self.number

    def end_run(self, reason: str = "done", code: int = 0, duration: float | None = None) -> None:
        self.emit("run_end", exit_code=code, reason=reason, iterations=self.number,
                  duration_s=duration if duration is not None
                  else (self.clock.now() - self.started).total_seconds())


def rich_night(root: Path) -> Night:
    """Two runs: a long one that passes a feature with a commit, struggles with another,
    passes and loses a third, sleeps on a rate limit and a pace, turns its gate red and runs
    out of budget; then a run that dies of a fatal error after 71 s."""
    night = Night(root)
    night.start_run(4242)
    night.emit("gate_baseline", number=1, commands=[{"name": "pytest", "ok": True}],
               duration_s=2)
    night.attempt(kind="initializer",
                  features={"user-login": False, "cart-total": False, "search-box": False})
    night.attempt(features={"user-login": True}, files={"src/login.py": "def login(): ...\n"},
                  commit="feat: user login")
    night.emit("gate", number=2, name="pytest", ok=True, new_failures=0, known_failures=0,
               new=[])
    night.attempt(71, reason="idle_timeout", features={"cart-total": False}, cost=None, seconds=900)
    night.attempt(74, outcome="rate_limited", reason="rate_limited", cost=0.0, seconds=30)
    night.emit("rate_limit_sleep", number=4, seconds=1800.0, source="retry_after")
    night.clock.advance(1800)
    night.attempt(features={"cart-total": False}, cost=0.25, estimated=True)
    night.emit("gate", number=5, name="pytest", ok=False, new_failures=2, known_failures=1,
               new=["tests/test_cart.py::test_total", "tests/test_cart.py::test_tax"])
    night.attempt(72, reason="provider_error", features={"cart-total": False})
    night.attempt(features={"search-box": True}, files={"src/search.py": "query = 3\n" * 10})
    night.attempt(features={"search-box": False}, files={"src/login.py": "def login(): pass\n"})
    night.emit("pace", number=9, utilization=0.91, window="five_hour", seconds=600.0)
    night.clock.advance(600)
    night.emit("budget_exhausted", budget="cost_usd", limit=3.0, used=3.25)
    night.end_run("budget", 9)
    night.clock.advance(3600)
    night.start_run(4343)
    night.attempt(1, outcome="fatal", reason="fatal", seconds=60, cost=None,
                  tokens={"input": 10})
    night.end_run("fatal", 8, duration=71.0)
    night.clock.advance(3600)
    return night
