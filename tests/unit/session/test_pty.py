"""The agent's start: the kernel's death signal through setpriv, else a preexec_fn (issue 33),
and its stdin written without a thread when the pipe takes it at once."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from aidd.session import pty
from aidd.session.pty import AgentProcess, StdinFeeder
from tests.waiting import wait_for

ARGV = ["sleep", "107"]
PATH = os.environ.get("PATH", os.defpath)


def _setpriv_here() -> str | None:
    return pty._setpriv(PATH)


def _cmdline(pid: int) -> list[str]:
    raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    return [part.decode() for part in raw.split(b"\0")[:-1]]


def _start_on_a_thread(tmp_path: Path) -> AgentProcess:
    """An agent started by a thread that has ended by the time this returns. The thread ends
    once the agent runs: setpriv sets the signal after its exec, and a parent gone before
    that is the window the next run's sweep covers."""
    started: list[AgentProcess] = []

    def start() -> None:
        started.append(AgentProcess(ARGV, tmp_path, {"PATH": PATH}))
        wait_for(lambda: _cmdline(started[0].pid) == ARGV, 10, "the agent's exec")

    starter = threading.Thread(target=start)
    starter.start()
    starter.join(10)
    return started[0]


@pytest.fixture
def popen_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    real = subprocess.Popen

    def spy(argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        calls.append({"argv": argv, **kwargs})
        return real(argv, **kwargs)

    monkeypatch.setattr(pty.subprocess, "Popen", spy)
    return calls


def test_with_setpriv_the_agent_starts_without_a_preexec_fn_and_looks_as_before(
        popen_calls: list[dict[str, Any]], tmp_path: Path) -> None:
    """A preexec_fn makes CPython fork all of aidd where it would vfork (2.5 ms against 0.1):
    setpriv sets the death signal instead, and the agent keeps its pid, argv, session and
    group."""
    if _setpriv_here() is None:
        pytest.skip("no util-linux setpriv >= 2.33 here")
    proc = AgentProcess(ARGV, tmp_path, {"PATH": PATH})
    try:
        agent = [call for call in popen_calls if call["argv"][-len(ARGV):] == ARGV]
        assert [call["preexec_fn"] for call in agent] == [None]
        wait_for(lambda: _cmdline(proc.pid) == ARGV, 10, "setpriv's exec of the agent")
        assert os.getsid(proc.pid) == proc.pid
        assert os.getpgid(proc.pid) == proc.pid
    finally:
        proc.signal_group(signal.SIGKILL)
        wait_for(lambda: proc.poll() is not None, 10, "the agent's end")
        proc.close()


@pytest.mark.parametrize("through", ["setpriv", "preexec_fn"])
def test_the_agent_dies_with_the_thread_that_started_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, through: str) -> None:
    """PR_SET_PDEATHSIG fires when the starting thread ends, as when aidd dies (kill -9)."""
    if through == "preexec_fn":
        monkeypatch.setattr(pty, "_setpriv", lambda search: None)
    elif _setpriv_here() is None:
        pytest.skip("no util-linux setpriv >= 2.33 here")
    proc = _start_on_a_thread(tmp_path)
    try:
        wait_for(lambda: proc.poll() is not None, 10, "the kernel's SIGKILL")
        assert proc.poll() == 128 + signal.SIGKILL
    finally:
        proc.signal_group(signal.SIGKILL)
        proc.close()


def _fake_setpriv(folder: Path, script: str) -> Path:
    folder.mkdir()
    fake = folder / "setpriv"
    fake.write_text(f"#!/bin/sh\n{script}\n")
    fake.chmod(0o755)
    return fake


@pytest.mark.parametrize(("script", "used"), [
    ("echo 'setpriv from util-linux 2.38.1'", True),
    ("echo \"setpriv: unrecognized option '--pdeathsig'\" >&2; exit 1", False),  # before 2.33
    ("echo 'setpriv: set parent death signal failed' >&2; exit 127", False),  # prctl refused
    ("echo 'BusyBox v1.36.1 (2023-07-10) multi-call binary.'", False),
])
def test_setpriv_is_used_only_where_it_sets_the_death_signal(tmp_path: Path, script: str,
                                                             used: bool) -> None:
    fake = _fake_setpriv(tmp_path / "bin", script)
    found = pty._setpriv.__wrapped__(str(tmp_path / "bin"))  # past the once-a-run cache
    assert found == (str(fake) if used else None)


def test_a_setpriv_found_through_a_relative_path_entry_is_not_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative PATH entry resolves against aidd's directory, which may be the project's."""
    _fake_setpriv(tmp_path / "bin", "echo 'setpriv from util-linux 2.38.1'")
    monkeypatch.chdir(tmp_path)
    assert pty._setpriv.__wrapped__("bin") is None


@pytest.mark.parametrize(("name", "error"), [
    ("/nonexistent/opencode", FileNotFoundError),
    ("no-such-cli-anywhere", FileNotFoundError),
    ("./plain-file", PermissionError),
])
def test_a_cli_that_cannot_start_fails_in_popen_as_without_setpriv(
        tmp_path: Path, name: str, error: type[OSError]) -> None:
    """Behind setpriv the failing exec would be setpriv's, after Popen returned (exit 127)."""
    (tmp_path / "plain-file").write_text("not a program\n")
    with pytest.raises(error):
        AgentProcess([name], tmp_path, {"PATH": PATH})


def test_a_prompt_the_pipe_takes_at_once_needs_no_thread() -> None:
    read, write = os.pipe()
    feeder = StdinFeeder(write)
    assert feeder.send(b"the prompt\n")
    feeder.close()
    assert feeder._thread is None
    assert os.read(read, 100) == b"the prompt\n"
    assert os.read(read, 100) == b""  # closed: the CLI sees EOF
    os.close(read)


def test_a_prompt_bigger_than_the_pipe_goes_on_from_a_thread_in_order() -> None:
    read, write = os.pipe()
    big = bytes(range(256)) * 1024  # 256 KiB: four times a pipe's default size
    feeder = StdinFeeder(write)
    assert feeder.send(big)  # never blocks, though nobody reads yet
    assert feeder.send(b"and a nudge")
    feeder.close()
    assert feeder._thread is not None
    got = bytearray()
    while chunk := os.read(read, 1 << 16):
        got += chunk
    assert bytes(got) == big + b"and a nudge"
    os.close(read)


def test_a_closed_reader_makes_the_feeder_broken() -> None:
    read, write = os.pipe()
    os.close(read)
    feeder = StdinFeeder(write)
    assert not feeder.send(b"x")
    assert feeder.broken
    feeder.abort()
