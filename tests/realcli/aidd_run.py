"""Run the real `aidd` process with a real CLI pointed at the mock, and read what it left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from . import clis
from .mock_server import MockServer

AIDD_CLI = {"claude": "claude-code", "opencode": "opencode", "kilo": "kilocode"}
NUDGE_MARK = "aidd has seen no output from you"  # prompts/nudge.md
SPEC = "# Hello\n\nA project that holds one greeting file, hello.txt.\n"


@dataclass(frozen=True)
class AiddRun:
    code: int
    out: str
    err: str
    project: Path
    elapsed_s: float

    @property
    def iterations(self) -> Path:
        return self.project / ".automaker" / "iterations"

    def log(self, number: int, suffix: str = ".log") -> str:
        return (self.iterations / f"{number:03d}{suffix}").read_text(errors="replace")

    def prompt(self, number: int) -> str:
        return (self.iterations / f"{number:03d}.prompt.md").read_bytes().decode()

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        lines = (self.project / ".automaker" / "events.jsonl").read_text().splitlines()
        found = [json.loads(line) for line in lines]
        return [e for e in found if name is None or e.get("event") == name]

    def killed_pids(self) -> list[int]:
        return [p["pid"] for e in self.events("kill") for p in e.get("pids", [])]


def aidd_env(
    cli: str, mock: MockServer, box: clis.Sandbox, extra: dict[str, str],
    path_first: Path | None = None,
) -> dict[str, str]:
    """The CLI's hermetic environment, the CLI first on PATH (after `path_first`, e.g. a
    wrapper of the CLI), aidd's config kept in the box."""
    env = clis.cli_env(cli, mock.url, box.home) | extra
    found = clis.binary(cli)
    assert found is not None
    env["PATH"] = os.pathsep.join(
        [*([str(path_first)] if path_first else []), str(found.parent), env["PATH"]])
    env["PYTHONPATH"] = str(clis.REPO)
    env["AIDD_HOME"] = str(box.root / "aidd-home")
    return env


def run_aidd(
    cli: str, mock: MockServer, box: clis.Sandbox, *args: str,
    extra_env: dict[str, str] | None = None, cap_s: float = 150, path_first: Path | None = None,
) -> AiddRun:
    """`aidd --project-dir <box> --cli <cli> --spec ... <args>`, stdin closed, output captured."""
    spec = box.root / "spec.md"
    spec.write_text(SPEC)
    argv = [sys.executable, "-m", "aidd", "--project-dir", str(box.project),
            "--cli", AIDD_CLI[cli], "--spec", str(spec), *args]
    started = time.monotonic()
    with subprocess.Popen(
            argv, env=aidd_env(cli, mock, box, extra_env or {}, path_first), cwd=box.root,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            errors="replace") as proc:
        try:
            out, err = proc.communicate(timeout=cap_s)
        except subprocess.TimeoutExpired:
            # SIGTERM first: aidd kills its agent's tree on the way out. A bare SIGKILL (what
            # subprocess.run does) left node CLIs running for the rest of the suite.
            proc.terminate()
            try:
                proc.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
            raise
    return AiddRun(proc.returncode, out, err, box.project, round(time.monotonic() - started, 1))


def leftovers(box: clis.Sandbox, pids: list[int]) -> list[str]:
    """Live processes that the run started: a pid aidd killed, or anything working in the box."""
    found = []
    for proc in psutil.process_iter(["pid", "name", "cwd", "status"]):
        info = proc.info
        if info["status"] == psutil.STATUS_ZOMBIE:
            continue
        cwd = info["cwd"] or ""
        if info["pid"] in pids or cwd.startswith(str(box.root)):
            found.append(f"{info['pid']} {info['name']} cwd={cwd}")
    return found
