"""Drive real `aidd` processes against the fake agent, many at a time, and inspect what they
leave: processes (by the fake's environment, with psutil) and files under `.automaker/`."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import psutil
import yaml

from aidd.agents.hints import NESTED_VARS
from tests.conftest import FAKES, FakeAgent

REPO = Path(__file__).resolve().parents[2]
TMP_PREFIX = ".aidd-tmp-"
# `bench/reliability.py` sets this: every aidd run a test ends is tallied there (one JSON line:
# exit code, crash, processes left, files changed outside the project) for docs/reliability.md.
TALLY_VAR = "AIDD_RELIABILITY_TALLY"


@dataclass(frozen=True)
class Counts:
    """How many runs each fault test makes (light: CI, heavy: `--heavy`)."""

    endings: int  # idle-kill / timeout / SIGTERM runs, split evenly
    kills: int  # kill -9 runs, split evenly over the kill points
    flood_mib: int
    parallel: int
    storms: int = 3  # fork-storm runs (idle / timeout / SIGTERM), split evenly

    @classmethod
    def light(cls) -> Counts:
        return cls(endings=6, kills=6, flood_mib=5, parallel=3)

    @classmethod
    def heavy(cls) -> Counts:
        return cls(endings=102, kills=51, flood_mib=50, parallel=3, storms=30)


@dataclass
class Finished:
    code: int
    out: str
    err: str


class Job:
    """One project, one private fake agent, private HOME/config: independent of other jobs."""

    def __init__(self, base: Path, name: str = "job") -> None:
        self.base = base / name
        self.project = self.base / "proj"
        self.project.mkdir(parents=True)
        # Beside the project, never written by aidd: planted links should point in here.
        self.outside = self.base / "outside"
        self.outside.mkdir()
        (self.outside / "precious.txt").write_text("the user's own file\n")
        self._outside_before = tree_state(self.outside)
        (self.project / "README.md").write_text("an existing codebase\n")
        record = self.base / "records"
        record.mkdir()
        self.fake = FakeAgent(FAKES / "bin", record, self.base / "script.json")
        self.fake.script([{"init": True}, {"say": "ok"}, {"finish": True}])
        home = self.base / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("AIDD_")}
        for name in NESTED_VARS:  # as if started from a plain terminal, not inside an agent
            env.pop(name, None)
        env.update(
            HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
            AIDD_HOME=str(self.base / "aidd-home"), IS_SANDBOX="1",  # claude's need as root
            PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
            PATH=f"{self.fake.bin_dir}{os.pathsep}{env.get('PATH', '')}",
            FAKE_AGENT_PYTHON=sys.executable, FAKE_AGENT_SCRIPT=str(self.fake.script_path),
            FAKE_AGENT_RECORD=str(record),
        )
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self._runs = 0

    @property
    def automaker(self) -> Path:
        return self.project / ".automaker"

    def start(self, *flags: str, preexec: Callable[[], None] | None = None,
              bin_dir: Path | None = None, stalled: bool = False) -> subprocess.Popen[bytes]:
        """Start aidd; stdout (the console, possibly huge) and stderr go to files. `stalled`:
        stdout is a pipe nobody reads (a terminal after Ctrl-S)."""
        self._runs += 1
        env = dict(self.env)
        if bin_dir is not None:
            env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
        out = (self.base / f"run{self._runs}.out").open("wb")
        err = (self.base / f"run{self._runs}.err").open("wb")
        with out, err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "aidd", "--project-dir", str(self.project), *flags],
                env=env, cwd=self.base, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE if stalled else out, stderr=err, preexec_fn=preexec)
        return self.proc

    def wait(self, timeout: float = 60) -> Finished:
        assert self.proc is not None
        try:
            code = self.proc.wait(timeout)
        finally:
            if self.proc.stdout is not None:  # the stalled pipe, read only now
                self.proc.stdout.close()
        out = (self.base / f"run{self._runs}.out").read_bytes()
        err = (self.base / f"run{self._runs}.err").read_bytes()
        done = Finished(code, out.decode("utf-8", "replace")[-20000:],
                        err.decode("utf-8", "replace"))
        self._tally(done)
        return done

    def _tally(self, done: Finished) -> None:
        target = os.environ.get(TALLY_VAR)
        if not target:
            return
        assert self.proc is not None
        keep = "--keep-children" in self.proc.args  # type: ignore[operator]  # args is a list here
        fact = {
            "test": os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0],
            "code": done.code,
            "crash": "internal error" in done.err or any(self.automaker.glob("aidd-crash-*")),
            "left": None if keep else len(self.leftovers()),
            "outside_changed": tree_state(self.outside) != self._outside_before,
        }
        with Path(target).open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(fact) + "\n")

    def run(self, *flags: str, timeout: float = 60, **kw: Any) -> Finished:
        self.start(*flags, **kw)
        return self.wait(timeout)

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)

    def tree_pids(self) -> list[int]:
        """The fake agents and the (grand)children they recorded in pid files."""
        pids = [r["pid"] for r in self.fake.records()]
        for path in self.fake.record_dir.iterdir():
            if not path.name.startswith(("inv-", "claim-")) and path.name.isidentifier():
                with contextlib.suppress(ValueError):
                    pids.append(int(path.read_text()))
        return pids

    def leftovers(self) -> list[psutil.Process]:
        return processes_with_env("FAKE_AGENT_RECORD", str(self.fake.record_dir))

    def events(self) -> list[dict[str, Any]]:
        path = self.automaker / "events.jsonl"
        if not path.exists():
            return []
        out = []
        for line in path.read_bytes().splitlines():
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
        return out


# -- processes ---------------------------------------------------------------------------------
def processes_with_env(key: str, value: str) -> list[psutil.Process]:
    """Running (non-zombie) processes whose environment has key=value; zombies that are our
    children are reaped on the way."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get(key) != value:
                continue
            if proc.status() == psutil.STATUS_ZOMBIE:
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(proc.pid, os.WNOHANG)
                continue
        except psutil.Error:
            continue
        found.append(proc)
    return found


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def kill_all(procs: Sequence[psutil.Process]) -> None:
    """Clean up after a failed assertion so one failure does not leak into other tests."""
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.kill()


def run_parallel(jobs: Sequence[Callable[[], None]], width: int) -> None:
    """Run the callables `width` at a time in threads; re-raise the first failure."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=width) as pool:
        for future in [pool.submit(job) for job in jobs]:
            future.result()


# -- files -------------------------------------------------------------------------------------
def corrupt_files(automaker: Path) -> list[str]:
    """Every file under `.automaker/` that does not parse as what it is (REL-3)."""
    bad = []
    for path in sorted(automaker.rglob("*")):
        if path.is_file() and not _parses(path):
            bad.append(str(path.relative_to(automaker)))
    return bad


def _parses(path: Path) -> bool:
    data = path.read_bytes()
    name = path.name
    try:
        if name == "aidd.lock":
            json.loads(data.split(b"\n", 1)[0])  # written in place; readers take line one
        elif name == "events.jsonl":
            lines = data.split(b"\n")
            # REL-3: at most the last line is torn (and then has no newline).
            for line in lines[:-1]:
                json.loads(line)
        elif name.endswith(".json"):
            json.loads(data)
        elif name.endswith((".yaml", ".yml")):
            yaml.safe_load(data)
        elif name in (".project_completion_pending", ".project_completed", ".stop"):
            datetime.fromisoformat(data.decode().strip())
        elif name.endswith((".md", ".txt")):
            data.decode("utf-8")
    except (ValueError, yaml.YAMLError):
        return False
    return True


def tree_state(root: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every entry under `root` with its mode, size and (for small files) content."""
    state = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        small = path.is_file() and not path.is_symlink() and info.st_size < 65536
        state[str(path.relative_to(root))] = (info.st_mode, info.st_size,
                                              path.read_bytes() if small else b"")
    return state


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob(f"{TMP_PREFIX}*")]
