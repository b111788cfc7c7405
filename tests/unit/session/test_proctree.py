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


def kill(proc: subprocess.Popen[bytes], scope: proctree.TreeScope,
         grace_s: float = 0.5) -> proctree.KillReport:
    report = proctree.terminate(
        lambda: scope.snapshot(proc.pid), root_pid=proc.pid,
        root_alive=lambda: proc.poll() is None, grace_s=grace_s, clock=SystemClock(),
        pump=time.sleep, hurry=lambda: False)
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
    report = kill(proc, scope)
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
    report = kill(proc, scope, grace_s=0.5)
    assert report.escalated
    assert 0.4 < time.monotonic() - began < 3.0
    assert not pid_alive(stubborn)
    assert proc.returncode == -9


def test_processes_already_gone_are_fine(fake_agent: FakeAgent) -> None:
    scope = proctree.TreeScope()
    proc = start(fake_agent)
    os.kill(proc.pid, 9)
    proc.wait()
    report = kill(proc, scope)
    assert report == proctree.KillReport((), escalated=False)


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
    report = proctree.terminate(lambda: scope.snapshot(proc.pid), root_pid=proc.pid,
                                root_alive=lambda: False, grace_s=0.5, clock=SystemClock(),
                                pump=time.sleep, hurry=lambda: False)
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


STORM = 'trap "" TERM; echo READY; while :; do sleep 1007 & sleep 0.005; done'
FORK_ON_TERM = 'trap "sleep 1008 & exit 0" TERM; echo READY; while :; do sleep 0.05; done'


def shell(script: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE,
                            start_new_session=True, env=env)
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"READY\n"
    return proc


def test_a_fork_loop_ignoring_sigterm_is_killed_to_the_last_process() -> None:
    """Freeze, then kill until a fresh snapshot is empty (issue 13 item 5)."""
    scope = proctree.TreeScope()
    proc = shell(STORM)
    deadline = time.monotonic() + 10
    while len(scope.snapshot(proc.pid)) < 20:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    report = kill(proc, scope, grace_s=0.5)
    assert report.escalated
    assert len(report.procs) > 20
    assert scope.snapshot(proc.pid) == []
    assert proctree.still_running(report.procs) == []


def test_a_child_forked_on_sigterm_is_killed_too() -> None:
    scope = proctree.TreeScope()
    proc = shell(FORK_ON_TERM)
    report = kill(proc, scope, grace_s=2.0)
    assert proc.returncode == 0  # it obeyed, after forking
    assert "sleep" in {i.name for i in report.procs}
    assert report.escalated  # the fork got SIGKILL without a grace of its own
    assert scope.snapshot(proc.pid) == []


def test_marked_processes_outside_the_tree_are_members() -> None:
    marked: list[int] = []
    stray = subprocess.Popen(["sleep", "1010"])  # aidd's child from before: not adopted
    scope = proctree.TreeScope(lambda: marked)
    agent = shell("echo READY; exec sleep 1009")
    try:
        assert stray.pid not in {p.pid for p in scope.snapshot(agent.pid)}
        marked.append(stray.pid)
        assert stray.pid in {p.pid for p in scope.snapshot(agent.pid)}
    finally:
        for child in (agent, stray):
            child.kill()
            child.wait()
        assert agent.stdout is not None
        agent.stdout.close()


def test_the_portable_table_agrees_with_proc(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = proctree._table()[os.getpid()]
    monkeypatch.setattr(proctree, "_PROC", proctree.Path("/nonexistent"))
    slow = proctree._table()[os.getpid()]
    assert (slow.ppid, slow.group, slow.session, slow.zombie) == (
        fast.ppid, fast.group, fast.session, fast.zombie)
