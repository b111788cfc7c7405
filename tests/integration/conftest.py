"""Fixtures that run the real `aidd` as a subprocess, with config and home isolated in the
test's tmp dir."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from aidd.agents.hints import NESTED_VARS
from tests.conftest import FakeAgent
from tests.integration.runs import REPO, Result, RunAidd
from tests.integration.scenario import MakeScenario, scenarios


@pytest.fixture
def aidd_env(tmp_path: Path) -> dict[str, str]:
    """An environment with no AIDD_* leaking in and private config/home folders."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIDD_")}
    home = tmp_path / "home"
    home.mkdir()
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),  # compiled templates (prompts/codecache)
        AIDD_HOME=str(tmp_path / "aidd-home"),
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
    )
    for name in NESTED_VARS:  # as if started from a plain terminal, not inside an agent
        env.pop(name, None)
    # A run checks what the real claude would refuse: as root, it needs exactly IS_SANDBOX=1.
    env["IS_SANDBOX"] = "1"
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


@pytest.fixture
def scenario(tmp_path: Path, aidd_env: dict[str, str]) -> Iterator[MakeScenario]:
    """Makes scenarios: aidd runs with their own project, fake-agent script and records, to run
    side by side; whatever of theirs still runs at the end is killed."""
    with scenarios(tmp_path, aidd_env) as make:
        yield make
