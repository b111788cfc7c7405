"""`aidd --doctor` with each real CLI against the mock model: the login probe's tiny prompt
reaches the model and the answer makes `auth` ok; a 401 makes it fail with exit 8 and the
CLI's own words (claude with its retries capped by the doctor, so in seconds, not minutes)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import pytest

from aidd.agents.hints import PROBE_PROMPT

from . import clis
from .aidd_run import AIDD_CLI, aidd_env
from .conftest import StartMock, require_cli
from .mock_server import MockServer
from .scenario import Reply, ReplyKind, Scenario

pytestmark = [pytest.mark.realcli, pytest.mark.timeout(240)]


def doctor(cli: str, mock: MockServer, box: clis.Sandbox) -> tuple[int, dict[str, Any], float]:
    (box.project / "README.md").write_text("existing code\n")
    argv = [sys.executable, "-m", "aidd", "--doctor", "--json", "--project-dir",
            str(box.project), "--cli", AIDD_CLI[cli]]
    started = time.monotonic()
    proc = subprocess.run(argv, env=aidd_env(cli, mock, box, {}), cwd=box.root,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=180, check=False)
    assert proc.stderr == "", proc.stderr
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    return proc.returncode, checks, time.monotonic() - started


@pytest.mark.parametrize("cli", clis.CLIS)
def test_a_cli_that_reaches_its_model_passes_auth(cli: str, start_mock: StartMock,
                                                  sandbox: clis.Sandbox) -> None:
    require_cli(cli)
    mock = start_mock(Scenario([Reply.final("OK")]))
    code, checks, _ = doctor(cli, mock, sandbox)
    assert checks["auth"]["status"] == "ok", checks["auth"]
    assert checks["cli"]["status"] == "ok", checks["cli"]
    assert code == 0, {n: c for n, c in checks.items() if c["status"] == "fail"}
    assert any(r.carries_text(PROBE_PROMPT) for r in mock.primary_requests())


@pytest.mark.parametrize("cli", clis.CLIS)
def test_a_refused_key_fails_auth_with_8(cli: str, start_mock: StartMock,
                                         sandbox: clis.Sandbox) -> None:
    require_cli(cli)
    mock = start_mock(Scenario([Reply.of(ReplyKind.AUTH_ERROR)]))
    code, checks, took = doctor(cli, mock, sandbox)
    assert (code, checks["auth"]["status"]) == (8, "fail"), checks["auth"]
    assert "auth login" in checks["auth"]["fix"]
    assert took < 60  # claude alone would retry a 401 for ~3 minutes
