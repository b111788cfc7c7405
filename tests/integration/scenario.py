"""Scenarios: real `aidd` runs, each on its own project with its own fake-agent script and
records, so runs that must wait out aidd's 5 s kill grace can run side by side."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from tests.conftest import FAKES, FakeAgent
from tests.fakes.attempt import pid_alive
from tests.waiting import wait_for

CLIS = {"opencode": "opencode", "kilocode": "kilo", "claude-code": "claude"}
GRACE_S = 5.0  # SUP-40: aidd's kill grace; not configurable
SLACK_S = 3.0  # startup and scheduling on a loaded 2-core machine

STUBBORN = [  # the agent and a setsid'd grandchild ignore SIGTERM; a plain child does not
    {"spawn": ["sleep", "1000"], "detach": True, "ignore": ["TERM"], "pid_file": "grandchild"},
    {"spawn": ["sleep", "1001"], "pid_file": "child"},
    {"ignore": ["TERM"]},
    {"mark": "stubborn"},  # all of the above is in place
]


@dataclass
class Scenario:
    """One `aidd` run on its own project with its own fake-agent script and records."""

    root: Path
    cli: str
    args: tuple[str, ...]
    env: dict[str, str]
    fake: FakeAgent
    proc: subprocess.Popen[bytes] | None = None
    ended: float = 0.0
    out: str = ""
    err: str = ""
    code: int | None = None
    extra_pids: list[int] = field(default_factory=list)

    @property
    def project(self) -> Path:
        return self.root / "proj"

    @property
    def iterations(self) -> Path:
        return self.project / ".automaker" / "iterations"

    def start(self) -> Scenario:
        argv = [sys.executable, "-m", "aidd", "--project-dir", str(self.project),
                "--cli", self.cli, "--no-clean", *self.args]
        self.proc = subprocess.Popen(argv, env=self.env, cwd=self.root, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return self

    def wait(self, timeout: float = 40) -> Scenario:
        assert self.proc is not None
        out, err = self.proc.communicate(timeout=timeout)
        self.ended = time.monotonic()
        self.out, self.err = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        self.code = self.proc.returncode
        return self

    def since(self, mark: str) -> float:
        """Seconds from the fake's `{"mark": mark}` step to aidd's end. A bound measured from
        a marker leaves out aidd's and the agent's start-up, which a loaded machine (other test
        workers, other users) stretches most and which no bound here is about."""
        written = json.loads((self.fake.record_dir / mark).read_text())
        return self.ended - float(written["monotonic"])

    def wait_for(self, ready: Callable[[], bool], limit_s: float = 20) -> None:
        """Wait for a condition the fake makes true (a pid file, a record); aidd ending first
        fails at once."""
        def check() -> bool:
            if ready():
                return True
            assert self.proc is not None
            assert self.proc.poll() is None, "aidd ended early"
            return False

        wait_for(check, limit_s, "the fake agent")

    def events(self) -> list[dict[str, Any]]:
        lines = (self.project / ".automaker" / "events.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines]

    def named(self, event: str) -> list[dict[str, Any]]:
        return [e for e in self.events() if e["event"] == event]

    def log(self, name: str = "001.log") -> str:
        return (self.iterations / name).read_text(encoding="utf-8", errors="replace")

    def tree_started(self) -> bool:
        return (self.fake.record_dir / "stubborn").exists()

    def tree_pids(self) -> list[int]:
        pids = [r["pid"] for r in self.fake.records()]
        return pids + [p for p in (self.fake.pid("child"), self.fake.pid("grandchild")) if p]


MakeScenario = Callable[..., Scenario]


@contextmanager
def scenarios(tmp_path: Path, aidd_env: dict[str, str]) -> Iterator[MakeScenario]:
    """Yields `make(cli, *invocations, args=...)`; at the end kills what is left of each."""
    made: list[Scenario] = []

    def make(cli: str, *invocations: Any, args: tuple[str, ...] = ()) -> Scenario:
        root = tmp_path / f"s{len(made)}-{cli}"
        (root / "proj").mkdir(parents=True)
        (root / "proj" / "README.md").write_text("existing code\n")
        fake = FakeAgent(FAKES / "bin", root / "records", root / "script.json")
        fake.record_dir.mkdir()
        fake.script(*invocations)
        env = {**aidd_env, "PATH": f"{fake.bin_dir}{os.pathsep}{os.environ['PATH']}",
               "FAKE_AGENT_PYTHON": sys.executable, "FAKE_AGENT_SCRIPT": str(fake.script_path),
               "FAKE_AGENT_RECORD": str(fake.record_dir)}
        made.append(Scenario(root, cli, args, env, fake))
        return made[-1]

    try:
        yield make
    finally:
        for s in made:
            if s.proc is not None and s.proc.poll() is None:
                s.proc.kill()
                s.proc.wait()
            for pid in [*s.tree_pids(), *s.extra_pids]:
                _kill_if_ours(pid)


def _kill_if_ours(pid: int) -> None:
    """Cleanup after a failure: only a process that is still one of the fake's tree."""
    try:
        cmd = " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return
    if "fake_agent" in cmd or cmd.startswith("sleep 10"):
        os.kill(pid, signal.SIGKILL)


def run_together(runs: list[Scenario], timeout: float = 40) -> None:
    for s in runs:
        s.start()
    for s in runs:
        s.wait(timeout)


def nudge_text(s: Scenario) -> str:
    """The rendered nudge, as aidd logged it after its first `nudge sent` line."""
    lines = s.log().splitlines()
    start = next(i for i, ln in enumerate(lines) if "nudge sent" in ln) + 1
    block = []
    for line in lines[start:]:
        if "  nudge: " not in line:
            break
        block.append(line.split("  nudge: ", 1)[1])
    assert block, "no nudge text logged"
    return "\n".join(block)


def alive(pids: list[int]) -> list[int]:
    return [p for p in pids if pid_alive(p)]
