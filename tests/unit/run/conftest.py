"""The run loop in-process: the real Supervisor on a fake clock with a scripted session."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from aidd.config import Actions, load_settings
from aidd.console import Console
from aidd.gate.runner import run_gate
from aidd.project.paths import ProjectPaths
from aidd.run.preflight import prepare_run
from aidd.run.supervisor import Supervisor
from tests.conftest import FAKES
from tests.fakes.clock import FakeClock
from tests.fakes.gate import FakeGate
from tests.fakes.session import FakeSession, Turn


@dataclass
class LoopRun:
    code: int | None  # None when the run raised
    error: Exception | None
    session: FakeSession
    paths: ProjectPaths
    console: str

    @property
    def events(self) -> list[dict[str, Any]]:
        lines = self.paths.events.read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def named(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == name]

    @property
    def run_end(self) -> dict[str, Any]:
        (end,) = self.named("run_end")
        return end

    def said(self, text: str) -> bool:
        return text in self.console

    def logs(self) -> list[str]:
        return sorted(p.name for p in self.paths.iterations.iterdir()
                      if p.name.endswith(".log"))


class ScheduledClock(FakeClock):
    """A fake clock that does something once its time comes (a `.stop` while aidd sleeps)."""

    def __init__(self) -> None:
        super().__init__()
        self._due: list[tuple[float, Callable[[], None]]] = []

    def at(self, after_s: float, action: Callable[[], None]) -> None:
        self._due.append((self.monotonic() + after_s, action))

    def advance(self, seconds: float) -> None:
        super().advance(seconds)
        for item in [d for d in self._due if d[0] <= self.monotonic()]:
            self._due.remove(item)
            item[1]()


@dataclass
class Loop:
    tmp_path: Path
    clock: ScheduledClock

    @property
    def paths(self) -> ProjectPaths:
        return ProjectPaths(self.tmp_path / "proj")

    def run(self, *turns: Turn, path: str = "/usr/bin:/bin", fake_gate: FakeGate | None = None,
            **flags: Any) -> LoopRun:
        """Run aidd on the project with these flags (option names as keys, `_` for `-`);
        `path`: where aidd finds git and the like, after the fake CLIs; `fake_gate` plays the
        validation gate's commands (configure them with `gate=[...]`)."""
        session = FakeSession(self.clock, list(turns))
        home = self.tmp_path / "home"
        environ = {"PATH": f"{FAKES / 'bin'}:{path}", "HOME": str(home),
                   "XDG_CONFIG_HOME": str(home / ".config"),
                   "AIDD_HOME": str(self.tmp_path / "aidd-home"),
                   "IS_SANDBOX": "1"}  # what claude needs as root, which the run checks
        given = {"project-dir": self.paths.root,
                 **{k.replace("_", "-"): v for k, v in flags.items()}}
        settings = load_settings(given, Actions(), environ, cwd=self.tmp_path)
        plan = prepare_run(settings, self.paths, None, self.clock)
        out = io.BytesIO()
        supervisor = Supervisor(plan, self.clock, attempt=session, console=Console(out),
                                gate=fake_gate or run_gate)
        code: int | None = None
        error: Exception | None = None
        try:
            code = supervisor.run()
        except Exception as exc:  # the run's own errors: the test looks at them
            error = exc
        return LoopRun(code, error, session, self.paths, out.getvalue().decode())


@pytest.fixture
def loop(tmp_path: Path) -> Loop:
    """A project with a spec (so the first attempt is the initializer) and no git."""
    project = Loop(tmp_path, ScheduledClock())
    project.paths.automaker.mkdir(parents=True)
    project.paths.app_spec.write_text("# Shop\nA small shop.\n")
    return project
