"""Finding and killing a whole process tree, with real processes (SUP-40..43)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Collection
from pathlib import Path

import psutil
import pytest

from aidd import spawning
from aidd.clock import SystemClock
from aidd.session import procfs, proctree
from tests.conftest import FakeAgent
from tests.fakes.attempt import pid_alive
from tests.waiting import wait_for


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
        lambda: scope.snapshot(proc.pid), root=proctree.Root(proc.pid, lambda: proc.poll() is None),
        grace_s=grace_s, clock=SystemClock())
    assert proc.stdout is not None
    proc.stdout.close()
    return report


def running(pid: int) -> bool:
    """Alive and not a zombie (a zombie is dead; only its parent can reap it)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


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
    report = proctree.terminate(lambda: scope.snapshot(proc.pid),
                                root=proctree.Root(proc.pid, lambda: False), grace_s=0.5,
                                clock=SystemClock())
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
FORK_ON_TERM = ('trap \'sleep 1008 & echo $! > "$PID_FILE"; exit 0\' TERM; echo READY; '
                'while :; do sleep 0.05; done')


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
    assert [info for info in report.procs if running(info.pid)] == []


def test_a_child_forked_on_sigterm_is_killed_too(tmp_path: Path) -> None:
    scope = proctree.TreeScope()
    pid_file = tmp_path / "forked"
    proc = shell(FORK_ON_TERM, {**os.environ, "PID_FILE": str(pid_file)})
    report = kill(proc, scope, grace_s=2.0)
    assert proc.returncode == 0  # it obeyed, after forking
    forked = int(pid_file.read_text())
    # By pid: under load the child can be caught before it execs `sleep`, still named `sh`.
    assert forked in {i.pid for i in report.procs}
    assert not running(forked)
    assert report.escalated  # the fork got SIGKILL without a grace of its own
    assert scope.snapshot(proc.pid) == []


def test_marked_processes_outside_the_tree_are_members() -> None:
    marked: list[int] = []
    stray = subprocess.Popen(["sleep", "1010"])  # aidd's child from before: not adopted
    scope = proctree.TreeScope(lambda among: marked)
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


def test_the_portable_table_agrees_with_proc() -> None:
    fast = procfs.table()[os.getpid()]
    slow = proctree._table_portable()[os.getpid()]
    assert (slow.ppid, slow.group, slow.session, slow.zombie) == (
        fast.ppid, fast.group, fast.session, fast.zombie)


def start_on_pid(pid: int) -> subprocess.Popen[bytes] | None:
    """A new process on `pid`, by setting the kernel's last pid (root only); None when that
    cannot be had (not root, or another process took the pid first, every time)."""
    for _ in range(20):
        try:
            Path("/proc/sys/kernel/ns_last_pid").write_text(str(pid - 1))
        except OSError:
            return None
        proc = subprocess.Popen(["sleep", "1015"])
        if proc.pid == pid:
            return proc
        proc.kill()
        proc.wait()
    return None


def test_a_pid_reused_since_the_scan_is_never_signalled() -> None:
    first = subprocess.Popen(["sleep", "1014"])
    stale = psutil.Process(first.pid)
    first.kill()
    first.wait()
    time.sleep(0.05)  # start times count in 10 ms ticks; a real reuse takes far longer
    second = start_on_pid(first.pid)
    if second is None:
        pytest.skip("cannot choose the next pid here (needs root)")
    try:
        report = proctree.terminate(lambda: [stale], grace_s=0.1, clock=SystemClock())
        assert report == proctree.KillReport((), escalated=False)
        assert running(second.pid)
    finally:
        second.kill()
        second.wait()


def test_a_marked_set_is_killed_to_the_last_process_and_nothing_else() -> None:
    """The kill for orphans of a killed aidd and the run-end sweep: by mark, no tree."""
    mark = "proctree-test-mark"
    env = {**os.environ, "TEST_MARK": mark}
    storm = shell(STORM, env)
    bystander = shell("echo READY; exec sleep 1016")
    try:
        scan = proctree.carrier_scan("TEST_MARK", mark, lambda carrier: True)
        deadline = time.monotonic() + 10
        while len(scan()) < 20:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        report = proctree.terminate(scan, grace_s=0.2, clock=SystemClock())
        assert report.escalated
        assert len(report.procs) > 20
        assert scan() == []
        assert running(bystander.pid)
    finally:
        for proc in (storm, bystander):
            proc.kill()
            proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()



def test_a_foreign_child_of_aidd_is_not_taken_for_an_adopted_orphan(
        fake_agent: FakeAgent) -> None:
    """--parallel N: another slot's agent (or aidd's own git) started while this attempt runs
    is aidd's child too; the scope's `foreign` keeps it out of this agent's tree."""
    foreign: set[int] = set()
    mine, blind = proctree.TreeScope(foreign=lambda: foreign), proctree.TreeScope()
    proc = start(fake_agent)
    other = subprocess.Popen(["sleep", "104"], start_new_session=True)  # another slot's
    stray = subprocess.Popen(["sleep", "105"], start_new_session=True)  # an orphan's stand-in
    foreign.add(other.pid)
    try:
        assert {other.pid, stray.pid} <= {p.pid for p in blind.snapshot(proc.pid)}
        pids = {p.pid for p in mine.snapshot(proc.pid)}
        assert other.pid not in pids
        assert stray.pid in pids  # a new child not named foreign is still adopted
        kill(proc, mine)
        assert running(other.pid)
        assert not running(stray.pid)
    finally:
        for child in (other, stray):
            child.kill()
            child.wait()


def test_a_scope_learns_aidd_s_children_without_scanning_the_process_table(
        fake_agent: FakeAgent, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: the children aidd had before the agent started come from its tasks' children
    lists (a few reads), not from a pass over every process; they are still never adopted."""
    if not procfs.children_known():
        pytest.skip("this kernel lists no task's children")
    earlier = subprocess.Popen(["sleep", "106"], start_new_session=True)
    try:
        with monkeypatch.context() as patch:
            patch.setattr(procfs, "table", lambda: pytest.fail("the process table was scanned"))
            scope = proctree.TreeScope()
        proc = start(fake_agent)
        assert earlier.pid not in {p.pid for p in scope.snapshot(proc.pid)}
        kill(proc, scope)
        assert running(earlier.pid)
    finally:
        earlier.kill()
        earlier.wait()


def test_a_child_aidd_is_starting_is_never_taken_for_an_adopted_orphan(
        fake_agent: FakeAgent) -> None:
    """--parallel N, seen in CI: a checkpoint's `git add` started on one slot's thread while
    another slot's attempt looked for its agent's orphans. Between fork and exec the child is
    a copy of aidd, without the run's mark its own environment gives it; the scope took it
    for an orphan and killed it (exit -15). Starts hold `spawning.LOCK` until the exec, scans
    hold it too. Here a start stays between fork and exec for 1 s."""
    foreign: set[int] = set()
    scope = proctree.TreeScope(foreign=lambda: foreign)
    proc = start(fake_agent)
    started: list[subprocess.Popen[bytes]] = []
    forked = threading.Event()

    def slow_start() -> None:
        with spawning.LOCK:
            forked.set()
            child = subprocess.Popen(["sleep", "106"], start_new_session=True,
                                     preexec_fn=lambda: time.sleep(1.0))
            started.append(child)
            foreign.add(child.pid)  # once exec'd, its mark names it another's

    before = {c.pid for c in psutil.Process().children()}
    starter = threading.Thread(target=slow_start)
    starter.start()
    try:
        assert forked.wait(5)
        wait_for(lambda: {c.pid for c in psutil.Process().children()} - before, 5,
                 "the fork")  # forked; its exec comes after 1 s
        pids = {p.pid for p in scope.snapshot(proc.pid)}
        starter.join(10)
        assert started
        assert started[0].pid not in pids
        kill(proc, scope)
        assert running(started[0].pid)
    finally:
        starter.join(10)
        for child in started:
            child.kill()
            child.wait()


# -- after a normal exit: the common case without the process table (issue 33) ----------------
def _exited(fake_agent: FakeAgent, *steps: dict[str, object]) -> int:
    """The fake opencode run to its exit 0 (reaped) after `steps`; its pid."""
    fake_agent.script([*steps, {"exit": 0}])
    proc = subprocess.Popen([fake_agent.binary("opencode")], stdin=subprocess.DEVNULL,
                            start_new_session=True)
    assert proc.wait() == 0
    return proc.pid


def _no_table(monkeypatch: pytest.MonkeyPatch) -> None:
    def scanned() -> None:
        pytest.fail("the process table was scanned")
    monkeypatch.setattr(procfs, "table", scanned)
    monkeypatch.setattr(proctree, "_table_portable", scanned)


def test_an_agent_that_left_nothing_is_known_so_without_the_table_or_every_environment(
        fake_agent: FakeAgent, monkeypatch: pytest.MonkeyPatch) -> None:
    if not procfs.children_known():
        pytest.skip("this kernel lists no task's children")
    asked: list[object] = []
    earlier = subprocess.Popen(["sleep", "110"])  # aidd's child from before: not the agent's
    try:
        scope = proctree.TreeScope(lambda among: asked.append(among) or ())
        _exited(fake_agent, {"spawn": ["true"], "wait": True})
        _no_table(monkeypatch)
        assert scope.surely_empty()
        assert None not in asked  # the mark looked for among newborns only, if any
    finally:
        earlier.kill()
        earlier.wait()


def test_a_double_forked_setsid_leftover_still_takes_the_full_look(
        fake_agent: FakeAgent) -> None:
    scope = proctree.TreeScope(lambda among: ())
    root = _exited(fake_agent, {"spawn": ["sleep", "108"], "detach": True, "pid_file": "left"})
    left = fake_agent.pid("left")
    assert left is not None
    assert os.getsid(left) != root  # setsid'd, and its parent gone: only adoption finds it
    assert not scope.surely_empty()
    report = proctree.terminate(lambda: scope.snapshot(root), grace_s=0.5, clock=SystemClock(),
                                root=proctree.Root(root, lambda: False))
    assert [i.pid for i in report.procs] == [left]
    assert not running(left)
    assert scope.surely_empty()


def test_a_marked_process_born_outside_the_tree_takes_the_full_look(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Never aidd's descendant, yet carrying the attempt's mark: what a daemon that keeps its
    requester's environment (atd) starts for the agent. Here the daemon is a process from
    before the scope, which forks on request."""
    born = 0
    with subprocess.Popen(["sh", "-c", "read x; sleep 109 & echo $!; wait"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          start_new_session=True,
                          env={**os.environ, "TEST_MARK": "attempt-7"}) as daemon:
        assert daemon.stdin is not None
        assert daemon.stdout is not None
        try:
            scope = proctree.TreeScope(lambda among: [
                c.pid for c in procfs.find_carrying("TEST_MARK", "attempt-7", among)])
            daemon.stdin.write(b"go\n")
            daemon.stdin.flush()
            born = int(daemon.stdout.readline())
            _no_table(monkeypatch)
            assert not scope.surely_empty()
        finally:
            if born:  # never os.kill(0): that is this test's own process group
                with contextlib.suppress(ProcessLookupError):
                    os.kill(born, 9)
            daemon.kill()


def test_a_child_aidd_started_is_never_adopted_whatever_proc_shows_of_it(
        fake_agent: FakeAgent) -> None:
    """--parallel N, seen in CI (stop 38): `Popen` returns once the exec began, and for a
    moment after /proc shows the new program with an empty environment, no mark (setpriv's
    agent has that moment twice); another slot's scan took aidd's own `git` for an orphan and
    killed it. A child named by `spawning.own` is never adopted, mark or not; one that is not
    named still is, and a named one is forgotten once reaped."""
    scope = proctree.TreeScope()  # no `foreign`: the mark cannot help here
    proc = start(fake_agent)
    with spawning.LOCK:  # as aidd's starts do; `env={}`: no mark, as mid-exec
        mine = subprocess.Popen(["sleep", "107"], env={}, start_new_session=True)
        spawning.own(mine.pid)
    stray = subprocess.Popen(["sleep", "108"], env={}, start_new_session=True)
    try:
        pids = {p.pid for p in scope.snapshot(proc.pid)}
        assert mine.pid not in pids
        assert stray.pid in pids
        assert not scope.surely_empty()  # the stray is new and not aidd's own
        kill(proc, scope)
        assert running(mine.pid)
        assert not running(stray.pid)
    finally:
        for child in (mine, stray):
            child.kill()
            child.wait()
    with spawning.LOCK:  # reaped: the next scan forgets it, so its pid may be used again
        assert mine.pid not in spawning.owned(procfs.children(os.getpid()))


def test_an_attempt_starts_from_the_listing_of_every_pid_the_last_one_ended_with(
        fake_agent: FakeAgent, monkeypatch: pytest.MonkeyPatch) -> None:
    """One listing of /proc an attempt (issue 33): the next attempt starts a few ms after the
    last one's end listed every pid, and takes that listing as what lived before it. A
    marked process born outside the tree meanwhile is still found; an older listing is not
    taken."""
    listings: list[None] = []
    listed = procfs.pids
    monkeypatch.setattr(procfs, "pids", lambda: listings.append(None) or listed())
    monkeypatch.setattr(procfs, "_latest", (float("-inf"), frozenset()), raising=False)
    mark = f"attempt-{os.getpid()}"
    born = 0
    with subprocess.Popen(["sh", "-c", "read x; sleep 109 & echo $!; wait"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          start_new_session=True, env={**os.environ, "TEST_MARK": mark}
                          ) as daemon:  # forks on request, as atd does (see above)
        assert daemon.stdin is not None
        assert daemon.stdout is not None
        try:
            def marked(among: Collection[int] | None) -> list[int]:
                return [c.pid for c in procfs.find_carrying("TEST_MARK", mark, among)]

            first = proctree.TreeScope(marked)
            _exited(fake_agent, {"spawn": ["true"], "wait": True})
            assert first.surely_empty()
            assert len(listings) == 2
            second = proctree.TreeScope(marked)
            assert len(listings) == 2  # the first one's end, taken again
            daemon.stdin.write(b"go\n")
            daemon.stdin.flush()
            born = int(daemon.stdout.readline())
            _no_table(monkeypatch)
            assert not second.surely_empty()
            assert len(listings) == 3
            monkeypatch.setattr(procfs, "_RECENT_S", -1.0, raising=False)  # too old now
            proctree.TreeScope(marked)
            assert len(listings) == 4
        finally:
            if born:  # never os.kill(0): that is this test's own process group
                with contextlib.suppress(ProcessLookupError):
                    os.kill(born, 9)
            daemon.kill()
