"""Drive a launched CLI through one attempt the way aidd will: deliver, finish, interrupt."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from aidd.agents.sessions import list_argv

from . import clis
from .drive import CliProcess
from .mock_server import MockServer


def launch(
    cli: str,
    argv: list[str],
    mock: MockServer,
    sandbox: clis.Sandbox,
    pty: bool = True,
    env_drop: tuple[str, ...] = (),
    env_add: dict[str, str] | None = None,
) -> CliProcess:
    """Start `argv` in the sandbox's project dir, with the CLI's env pointing at `mock`."""
    env = {k: v for k, v in clis.cli_env(cli, mock.url, sandbox.home).items() if k not in env_drop}
    env |= env_add or {}
    return CliProcess(argv, env, sandbox.project, use_pty=pty)


def deliver(proc: CliProcess, cli: str, text: str) -> None:
    if cli == "claude":
        proc.write(clis.claude_user_line(text))  # stdin stays open for a nudge (ADP-22)
    else:
        proc.write(text.encode())
        proc.close_stdin()


def claude_interrupt_line(request_id: str = "aidd-interrupt-1") -> bytes:
    """stream-json control request that aborts claude's current turn (what the SDK sends)."""
    request = {
        "type": "control_request",
        "request_id": request_id,
        "request": {"subtype": "interrupt"},
    }
    return (json.dumps(request) + "\n").encode()


def interrupt(proc: CliProcess, grace_s: float = 10.0) -> dict[str, Any]:
    """SIGINT to the process group; SIGKILL after the grace. Exit code and time taken."""
    sent = time.monotonic()
    proc.signal_group(signal.SIGINT)
    code = proc.wait(grace_s)
    took = round(time.monotonic() - sent, 3)
    if code is None:
        proc.kill_group()
        return {
            "sigint_exit": None,
            "sigint_s": took,
            "sigkilled": True,
            "exit_after_kill": proc.proc.returncode,
        }
    return {"sigint_exit": code, "sigint_s": took, "sigkilled": False}


def run_to_end(proc: CliProcess, cli: str, cap_s: float, results: int = 1) -> dict[str, Any]:
    """Wait for the end; claude ends when stdin closes after its `results`-th result (ADP-31)."""
    wait_s = cap_s
    if cli == "claude":
        seen = proc.wait_output(lambda b: b.count(b'"type":"result"') >= results, cap_s)
        if not seen and proc.proc.poll() is None:
            return {"exit_code": None, "ended_by": "cap", **interrupt(proc)}
        proc.close_stdin()
        wait_s = 10
    code = proc.wait(wait_s)
    if code is not None:
        return {"exit_code": code, "ended_by": "self"}
    return {"exit_code": None, "ended_by": "cap", **interrupt(proc)}


def session_listing(cli: str, env: dict[str, str], cwd: Path) -> bytes:
    """`<cli> session list --format json ...` exactly as aidd runs it (aidd/agents/sessions.py)."""
    out = subprocess.run(
        list_argv(str(clis.binary(cli))),
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
        check=False,
    )
    return out.stdout
