"""Finding and killing a whole process tree, with real processes (SUP-40..43)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest

from aidd.clock import SystemClock
from aidd.session import proctree
from tests.conftest import FakeAgent
from tests.fakes.attempt import pid_alive


def start(fake_agent: FakeAgent, *steps: dict[str, object]) -> subprocess.Popen[bytes]:
    """The fake opencode with `steps`, then silence; returns once its children exist."""
    fake_agent.script([*steps, {"line": "READY"}, {"sleep": 60}])
    proc = subprocess.Popen([fake_agent.binary("opencode")], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"READY\n"
    return proc


def kill(proc: subprocess.Popen[bytes], procs: list[psutil.Process],
         grace_s: float = 0.5) -> proctree.KillReport:
    report = proctree.terminate(
        procs, root_pid=proc.pid, root_alive=lambda: proc.poll() is None, grace_s=grace_s,
        clock=SystemClock(), pump=time.sleep, hurry=lambda: False)
    assert proc.stdout is not None
    proc.stdout.close()
    return report


@pytest.fixture(autouse=True)
def subreaper() -> None:
    assert proctree.enable_subreaper()


def test_snapshot_finds_descendants_group_members_and_adopted_orphans(
        fake_agent: FakeAgent) -> None:
    scope = proctree.TreeScope()
    proc = start(
        fake_agent,
        {"spawn": ["sleep", "101"], "pid_file": "child"},
        {"spawn": ["sleep", "102"], "detach": True, "pid_file": "detached"},
    )
    child, detached = fake_agent.pid("child"), fake_agent.pid("detached")
    assert child is not None
    assert detached is not None
    assert os.getsid(detached) != proc.pid  # setsid: only adoption makes it findable
    pids = {p.pid for p in scope.snapshot(proc.pid)}
    assert {proc.pid, child, detached} <= pids
    assert os.getpid() not in pids
    report = kill(proc, scope.snapshot(proc.pid))
    assert not report.escalated
    assert {i.pid for i in report.procs} >= {proc.pid, child, detached}
    assert not any(pid_alive(p) for p in (proc.pid, child, detached))


def test_sigterm_ignorers_get_sigkill_after_the_grace(fake_agent: FakeAgent) -> None:
    scope = proctree.TreeScope()
    proc = start(
        fake_agent,
        {"spawn": ["sleep", "103"], "detach": True, "ignore": ["TERM"], "pid_file": "stubborn"},
        {"ignore": ["TERM"]},
    )
    stubborn = fake_agent.pid("stubborn")
    assert stubborn is not None
    began = time.monotonic()
    report = kill(proc, scope.snapshot(proc.pid), grace_s=0.5)
    assert report.escalated
    assert 0.4 < time.monotonic() - began < 3.0
    assert not pid_alive(stubborn)
    assert proc.returncode == -9


def test_processes_already_gone_are_fine(fake_agent: FakeAgent) -> None:
    scope = proctree.TreeScope()
    proc = start(fake_agent)
    procs = scope.snapshot(proc.pid)
    os.kill(proc.pid, 9)
    proc.wait()
    report = kill(proc, procs)
    assert [i.pid for i in report.procs] == [proc.pid]


def test_snapshot_of_a_dead_root_still_finds_its_leftovers(fake_agent: FakeAgent) -> None:
    """After a normal exit, leftovers are found by group, session and adoption (SUP-42)."""
    scope = proctree.TreeScope()
    fake_agent.script([{"spawn": ["sleep", "104"], "pid_file": "left"}, {"exit": 0}])
    proc = subprocess.Popen([fake_agent.binary("opencode")], stdin=subprocess.DEVNULL,
                            start_new_session=True)
    assert proc.wait() == 0
    left = fake_agent.pid("left")
    assert left is not None
    procs = scope.snapshot(proc.pid)
    assert [p.pid for p in procs] == [left]
    report = proctree.terminate(procs, root_pid=proc.pid, root_alive=lambda: False,
                                grace_s=0.5, clock=SystemClock(), pump=time.sleep,
                                hurry=lambda: False)
    assert [i.name for i in report.procs] == ["sleep"]
    assert not pid_alive(left)


def test_never_lists_aidd_itself() -> None:
    scope = proctree.TreeScope()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        pids = {p.pid for p in scope.snapshot(os.getpid())}
        assert os.getpid() not in pids
        assert child.pid in pids
    finally:
        child.kill()
        child.wait()


def test_describe_names_each_process() -> None:
    child = subprocess.Popen(["sleep", "105"])
    try:
        deadline = time.monotonic() + 5
        while psutil.Process(child.pid).cmdline() != ["sleep", "105"]:  # until exec is done
            assert time.monotonic() < deadline
            time.sleep(0.01)
        (info,) = proctree.describe([psutil.Process(child.pid)])
        assert (info.pid, info.name, info.cmd) == (child.pid, "sleep", "sleep 105")
        assert info.label() == f"{child.pid} sleep"
    finally:
        child.kill()
        child.wait()
