"""Run the real `aidd` as a subprocess, with config and home isolated in the test's tmp dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from aidd.project.paths import ProjectPaths
from tests.conftest import FakeAgent
from tests.featurefiles import feat, write

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    code: int
    out: str
    err: str


RunAidd = Callable[..., Result]


@pytest.fixture
def aidd_env(tmp_path: Path) -> dict[str, str]:
    """An environment with no AIDD_* leaking in and private config/home folders."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIDD_")}
    home = tmp_path / "home"
    home.mkdir()
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        AIDD_HOME=str(tmp_path / "aidd-home"),
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
    )
    env.pop("CLAUDECODE", None)
    return env


@pytest.fixture
def run_aidd(aidd_env: dict[str, str], tmp_path: Path) -> RunAidd:
    def run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 60) -> Result:
        proc = subprocess.run(
            [sys.executable, "-m", "aidd", *args],
            env=env if env is not None else aidd_env,
            cwd=cwd or tmp_path,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    return run


def tree_snapshot(root: Path) -> set[str]:
    """Every path under `root` (to prove a failed run wrote nothing)."""
    if not root.exists():
        return set()
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture
def env(fake_agent: FakeAgent, aidd_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """`aidd_env` with the fake agent CLIs first on PATH. git never finds a repository above
    the test's tmp dir, so "outside git" means it."""
    keys = ("PATH", "FAKE_AGENT_PYTHON", "FAKE_AGENT_SCRIPT", "FAKE_AGENT_RECORD")
    return {**aidd_env, **{k: os.environ[k] for k in keys},
            "GIT_CEILING_DIRECTORIES": str(tmp_path)}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An existing codebase, outside git."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "README.md").write_text("existing code\n")
    return root


def events(root: Path, name: str | None = None) -> list[dict[str, Any]]:
    """The project's events.jsonl, all or those named `name`."""
    lines = (root / ".automaker" / "events.jsonl").read_text().splitlines()
    found = [json.loads(line) for line in lines]
    return [e for e in found if name is None or e["event"] == name]


def complete_project(root: Path) -> None:
    """What a finished project holds: one passing feature, a spec copy and a changelog."""
    write(ProjectPaths(root), "feature-1-a", feat(description="a", status="completed", passes=True))
    (root / ".automaker" / "app_spec.txt").write_text("spec\n")
    (root / ".automaker" / "CHANGELOG.md").write_text("# Changelog\n")
