"""A fleet in a test's tmp dir: projects with their own fake-agent script and records, the
fleet file, `aidd fleet ...` run in the foreground or the background, and its local Temporal
server (its state under the test's XDG_DATA_HOME) stopped at the end."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import yaml

from aidd.agents.hints import NESTED_VARS
from tests.conftest import FAKES, FakeAgent
from tests.featurefiles import feature
from tests.integration.runs import REPO, Result, onboarded

BRANCH = "aidd/lab"
GIT_USER = {"GIT_AUTHOR_NAME": "tester", "GIT_AUTHOR_EMAIL": "tester@localhost",
            "GIT_COMMITTER_NAME": "tester", "GIT_COMMITTER_EMAIL": "tester@localhost"}
LIMITS = ["--idle-nudge-timeout", "20", "--idle-timeout", "40", "--timeout", "60", "--no-clean"]


def working(seconds: float) -> list[dict[str, Any]]:
    """An attempt that marks its start and end in its records, working `seconds` between."""
    return [{"mark": "start"}, {"tool": {"name": "read", "input": {"path": "README.md"}}},
            {"sleep": seconds}, {"say": "done"}, {"mark": "end"},
            {"finish": {"cost": 0.25}}]


@dataclass(frozen=True)
class Commit:
    sha: str
    author: str
    subject: str
    files: list[str]  # the files it changed


@dataclass
class Lab:
    root: Path
    env: dict[str, str]
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    fakes: dict[str, FakeAgent] = field(default_factory=dict)

    @property
    def data_dir(self) -> Path:
        return Path(self.env["XDG_DATA_HOME"]) / "aidd" / "fleet"

    def project(self, name: str, *invocations: Any, args: list[str] | None = None,
                **extra: Any) -> dict[str, Any]:
        """A project that is onboarded with one failing feature, and its fleet entry."""
        proj = self.root / "projects" / name
        proj.mkdir(parents=True)
        (proj / "README.md").write_text("existing code\n")
        onboarded(proj)
        feature(proj)
        fake = FakeAgent(FAKES / "bin", self.root / "records" / name,
                         self.root / "scripts" / f"{name}.json")
        fake.record_dir.mkdir(parents=True)
        fake.script_path.parent.mkdir(exist_ok=True)
        fake.script(*invocations)
        self.fakes[name] = fake
        return {"path": str(proj), "cli": "opencode",
                "args": [*LIMITS, *(args if args is not None else ["--max-iterations", "1"])],
                "env": {"FAKE_AGENT_SCRIPT": str(fake.script_path),
                        "FAKE_AGENT_RECORD": str(fake.record_dir)}, **extra}

    def git_project(self, name: str, *invocations: Any, args: list[str] | None = None,
                    **extra: Any) -> dict[str, Any]:
        """`project`, committed and pushed to a local bare repository, its fleet entry a
        `git` project on the branch `aidd/lab`."""
        entry = self.project(name, *invocations, args=args, **extra)
        work = Path(entry.pop("path"))
        remote = self.remote(name)
        self.git(self.root, "init", "--quiet", "--bare", "-b", "main", str(remote))
        self.git(work, "init", "--quiet", "-b", "main")
        self.git(work, "add", "--all")
        self.git(work, "commit", "--quiet", "-m", "the project")
        self.git(work, "push", "--quiet", str(remote), "main")
        return {**entry, "git": str(remote), "branch": BRANCH}

    def remote(self, name: str) -> Path:
        return self.root / "remotes" / f"{name}.git"

    def git(self, cwd: Path, *args: str) -> str:
        env = {**self.env, **GIT_USER}
        return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True,
                              text=True, check=True, stdin=subprocess.DEVNULL).stdout.strip()

    def branch_log(self, name: str) -> list[Commit]:
        """The remote branch's commits, oldest first ([] before the branch exists)."""
        remote = str(self.remote(name))
        if not self.git(self.root, "--git-dir", remote, "branch", "--list", BRANCH):
            return []
        lines = self.git(self.root, "--git-dir", remote, "log", "--reverse",
                         "--format=%H%x09%an%x09%s", BRANCH).splitlines()
        commits = []
        for line in lines:
            sha, author, subject = line.split("\t", 2)
            files = self.git(self.root, "--git-dir", remote, "diff-tree", "--root",
                             "--no-commit-id", "--name-only", "-r", sha).splitlines()
            commits.append(Commit(sha, author, subject, files))
        return commits

    def branch_files(self, name: str) -> list[str]:
        return self.git(self.root, "--git-dir", str(self.remote(name)), "ls-tree", "-r",
                        "--name-only", BRANCH).splitlines()

    def push_elsewhere(self, name: str, file: str) -> str:
        """A commit pushed to the branch by someone else (a newer attempt): its sha."""
        other = self.root / "elsewhere" / name
        self.git(self.root, "clone", "--quiet", "--branch", BRANCH, str(self.remote(name)),
                 str(other))
        (other / file).write_text("a newer attempt's work\n")
        self.git(other, "add", file)
        self.git(other, "commit", "--quiet", "-m", "a newer attempt")
        self.git(other, "push", "--quiet", "origin", BRANCH)
        return self.git(other, "rev-parse", "HEAD")

    def machine(self, name: str) -> dict[str, str]:
        """The environment of another machine: its own data dir (checkouts, logs) and its
        own name in the fleet (AIDD_FLEET_HOST: the processes share this host's name)."""
        return {**self.env, "XDG_DATA_HOME": str(self.root / name / "share"),
                "AIDD_FLEET_HOST": name}

    def local_server(self) -> str:
        """The local server started as `up` starts it (`status` never does), its address."""
        code = ("import os; from aidd.fleet import server; print(server.ensure_server("
                "server.data_dir(os.environ), server.find_binary(None)).address)")
        done = subprocess.run([sys.executable, "-c", code], env=self.env, capture_output=True,
                              text=True, timeout=90, check=True, stdin=subprocess.DEVNULL)
        return done.stdout.strip()

    def server_address(self) -> str:
        state = json.loads((self.data_dir / "server.json").read_text())
        return f"127.0.0.1:{state['port']}"

    def fleet_file(self, projects: dict[str, Any], **top: Any) -> Path:
        path = self.root / "fleet.yaml"
        path.write_text(yaml.safe_dump({"name": "lab", "heartbeat_timeout": 3,
                                        **top, "projects": projects}))
        return path

    def run(self, *args: str, timeout: float = 60, env: dict[str, str] | None = None) -> Result:
        done = subprocess.run([sys.executable, "-m", "aidd", "fleet", *args], env=env or self.env,
                              cwd=self.root, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        return Result(done.returncode, done.stdout, done.stderr)

    def start(self, *args: str, name: str = "up",
              env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """`aidd fleet ARGS` in the background, its output in `<root>/<name>.out`."""
        with (self.root / f"{name}.out").open("ab") as sink:
            proc = subprocess.Popen([sys.executable, "-m", "aidd", "fleet", *args],
                                    env=env or self.env, cwd=self.root, stdin=subprocess.DEVNULL,
                                    stdout=sink, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def output(self, name: str = "up") -> str:
        return (self.root / f"{name}.out").read_text(errors="replace")

    def status(self) -> dict[str, dict[str, Any]]:
        res = self.run("status", "--json")
        assert res.code == 0, res.err
        return {row["project"]: row for row in json.loads(res.out)}

    def mark(self, project: str, name: str) -> float | None:
        path = self.fakes[project].record_dir / name
        return float(json.loads(path.read_text())["monotonic"]) if path.exists() else None

    def spans(self, projects: Iterable[str]) -> list[tuple[float, float]]:
        """Each project's agent from its start mark to its end mark (`working`)."""
        spans = []
        for name in projects:
            start, end = self.mark(name, "start"), self.mark(name, "end")
            assert start is not None, name
            assert end is not None, name
            spans.append((start, end))
        return spans

    def agent_pids(self) -> list[int]:
        return [r["pid"] for fake in self.fakes.values() for r in fake.records()]

    def server_pid(self) -> int | None:
        state = self.data_dir / "server.json"
        return int(json.loads(state.read_text())["pid"]) if state.exists() else None

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        for pid in self.leftovers():
            _kill(pid)
        pid = self.server_pid()
        if pid is not None:
            _kill(pid)

    def leftovers(self) -> list[int]:
        """Processes of this lab still alive: an aidd or a fake agent of its projects."""
        found = []
        for proc in psutil.process_iter(["pid", "cmdline", "environ"]):
            try:
                env = proc.info["environ"] or {}
            except psutil.Error:
                continue
            if env.get("XDG_DATA_HOME", "").startswith(str(self.root)) and \
                    proc.info["pid"] != self.server_pid() and proc.status() != "zombie":
                found.append(int(proc.info["pid"]))
        return found


def max_overlap(spans: list[tuple[float, float]]) -> int:
    """The most spans open at one instant."""
    edges = sorted(itertools.chain(((s, 1) for s, _ in spans), ((e, -1) for _, e in spans)))
    running = peak = 0
    for _, step in edges:  # an end sorts before a start at the same instant
        running += step
        peak = max(peak, running)
    return peak


def _kill(pid: int) -> None:
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


@contextmanager
def lab_in(tmp_path: Path) -> Iterator[Lab]:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIDD_", "FAKE_AGENT"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local" / "share"), AIDD_HOME=str(tmp_path / "aidd-home"),
               PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
               PATH=f"{FAKES / 'bin'}{os.pathsep}{os.environ['PATH']}",
               FAKE_AGENT_PYTHON=sys.executable, IS_SANDBOX="1",
               GIT_CEILING_DIRECTORIES=str(tmp_path))
    for name in NESTED_VARS:  # as if started from a plain terminal, not inside an agent
        env.pop(name, None)
    lab = Lab(tmp_path, env)
    try:
        yield lab
    finally:
        lab.close()
