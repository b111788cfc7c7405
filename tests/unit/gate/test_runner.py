"""One gate command run for real: its output in the gate log and its last lines kept, its exit
status, its JUnit report only when fresh, and its whole tree killed at the timeout, on a stop
and after it exits. Timing asserts are upper bounds."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import psutil
import pytest

from aidd.clock import SystemClock
from aidd.fsio import UnsafePathError
from aidd.gate import runner
from aidd.gate.commands import GateCommand
from aidd.gate.runner import GateRequest, run_gate
from aidd.session.orphans import GATE_VAR, MARK_VAR
from tests.planted import plant
from tests.waiting import wait_for

REPORT = b"""<testsuite><testcase classname="t" name="a"><failure/></testcase>
<testcase classname="t" name="b"/></testsuite>"""


def _request(root: Path, *commands: GateCommand, cancelled=lambda: False) -> GateRequest:  # type: ignore[no-untyped-def]
    return GateRequest(commands, root, {"PATH": os.environ["PATH"]},
                       root / ".automaker" / "iterations" / "004.gate.log", SystemClock(),
                       cancelled)


def _gone(pid_file: Path) -> bool:
    pid = int(pid_file.read_text())
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_output_goes_to_the_log_and_its_end_is_kept(tmp_path: Path) -> None:
    script = ("for i in $(seq 1 100); do echo line $i; done; "
              "printf '\\033[31mred\\033[0m\\n'; exit 3")
    ok, red = run_gate(_request(tmp_path, GateCommand("one", "echo hello"),
                                GateCommand("two", script)))
    assert (ok.exit, ok.ok, ok.tail) == (0, True, ("hello",))
    assert (red.exit, red.ok, red.why) == (3, False, "exited 3")
    assert len(red.tail) == runner.TAIL_LINES
    assert red.tail[-2:] == ("line 100", "red")  # colours gone
    log = (tmp_path / ".automaker/iterations/004.gate.log").read_text()
    assert log.startswith("=== gate one: echo hello\nhello\n=== gate one: exit 0 after ")
    assert "line 1\n" in log
    assert "=== gate two: exit 3 after" in log


def test_a_hung_command_and_its_children_are_killed_at_the_timeout(tmp_path: Path) -> None:
    script = ("sleep 300 & echo $! > child.pid; "
              "sh -c 'trap \"\" TERM; sleep 300' & echo $! > stubborn.pid; sleep 300")
    start = time.monotonic()
    run, after = run_gate(_request(tmp_path, GateCommand("hang", script, timeout_s=1),
                                   GateCommand("after", "touch ran")))
    elapsed = time.monotonic() - start
    assert run.timed_out
    assert run.exit is None
    assert run.why == "timed out after 1s"
    assert elapsed < 1 + 2 + 5  # the timeout, the grace, and a loaded machine's margin
    assert _gone(tmp_path / "child.pid")
    assert _gone(tmp_path / "stubborn.pid")
    assert after.exit == 0
    assert (tmp_path / "ran").exists()


def test_what_a_command_leaves_running_is_killed(tmp_path: Path) -> None:
    # The first keeps the output pipe open after the command exits; the second does not.
    (run, quiet) = run_gate(_request(
        tmp_path, GateCommand("server", "sleep 300 & echo $! > a.pid; echo started"),
        GateCommand("quiet", "sleep 300 >/dev/null 2>&1 & echo $! > b.pid")))
    assert (run.exit, run.tail, quiet.exit) == (0, ("started",), 0)
    assert _gone(tmp_path / "a.pid")
    assert _gone(tmp_path / "b.pid")


def test_a_stop_cuts_the_gate_short(tmp_path: Path) -> None:
    asked = tmp_path / "stop"
    start = time.monotonic()
    runs = run_gate(_request(tmp_path, GateCommand("slow", "touch stop; sleep 300"),
                             GateCommand("never", "touch ran"), cancelled=asked.exists))
    assert [r.cancelled for r in runs] == [True]
    assert time.monotonic() - start < 10
    assert not (tmp_path / "ran").exists()


def test_a_fresh_junit_report_is_read_a_stale_or_missing_one_is_not(tmp_path: Path) -> None:
    write = f"printf '%s' '{REPORT.decode()}' > report.xml; exit 1"
    (fresh,) = run_gate(_request(tmp_path, GateCommand("t", write, junit="report.xml")))
    assert fresh.failing == {"t::a"}
    assert fresh.junit_problem is None
    (stale,) = run_gate(_request(tmp_path, GateCommand("t", "exit 1", junit="report.xml")))
    assert stale.failing is None
    assert stale.junit_problem == "report.xml was not rewritten by the run (stale)"
    (missing,) = run_gate(_request(tmp_path, GateCommand("t", "exit 1", junit="none.xml")))
    assert missing.junit_problem == "none.xml was not written"


def test_a_report_leading_out_of_the_project_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.xml"
    outside.write_bytes(REPORT)
    project = tmp_path / "proj"
    project.mkdir()
    plant(project / "report.xml", "symlink", outside)
    (run,) = run_gate(_request(project, GateCommand("t", "touch -h report.xml; exit 1",
                                                    junit="report.xml")))
    assert run.failing is None
    assert run.junit_problem is not None
    assert "outside the project" in run.junit_problem


def test_the_log_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "LOG_CAP", 10_000)
    (run,) = run_gate(_request(tmp_path, GateCommand("flood", "seq 1 100000")))
    log = (tmp_path / ".automaker/iterations/004.gate.log").read_bytes()
    assert run.exit == 0
    assert run.tail[-1] == "100000"
    assert 10_000 < len(log) < 10_200
    assert b"[gate output cut here: the rest was not kept]" in log


def test_the_log_is_never_written_through_a_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    project = tmp_path / "proj"
    plant(project / ".automaker/iterations/004.gate.log", "symlink", victim)
    with pytest.raises(UnsafePathError):
        run_gate(_request(project, GateCommand("t", "echo hi")))
    assert victim.read_text() == "keep"


def test_a_gate_in_a_worktree_writes_its_log_in_the_project(tmp_path: Path) -> None:
    """--parallel: the commands run in the slot's worktree, the log stays the project's."""
    project, tree = tmp_path / "proj", tmp_path / "tree"
    project.mkdir()
    tree.mkdir()
    log = project / ".automaker" / "iterations" / "004.gate.log"
    req = GateRequest((GateCommand("where", "pwd -P; touch here"),), tree,
                      {"PATH": os.environ["PATH"]}, log, SystemClock(), lambda: False, project)
    (run,) = run_gate(req)
    assert run.tail == (str(tree.resolve()),)
    assert (tree / "here").exists()
    assert not (project / "here").exists()
    assert log.read_text().startswith("=== gate where: ")


def test_what_aidd_starts_meanwhile_is_never_taken_for_the_gate_s(tmp_path: Path) -> None:
    """--parallel: while a slot's gate runs, aidd starts other children of its own, carrying
    the run's mark: its git (no attempt number), another slot's gate, another slot's agent.
    None is taken for what this gate left running, though aidd is their parent; the gate's
    own leftover is."""
    env = {"PATH": os.environ["PATH"], MARK_VAR: "feedbeef12345678"}
    script = "sleep 300 & echo $! > own.pid; touch started; while ! test -e go; do sleep 0.05; done"
    req = GateRequest((GateCommand("wait", script),), tmp_path, env,
                      tmp_path / "004.gate.log", SystemClock(), lambda: False)
    gate = threading.Thread(target=run_gate, args=(req,))
    gate.start()
    others: list[subprocess.Popen[bytes]] = []
    try:
        wait_for(lambda: (tmp_path / "started").exists(), 20, "the gate to start")
        # aidd's git; another slot's gate; another slot's agent
        for extra in ({}, {GATE_VAR: "another"}, {"AIDD_ITERATION": "7"}):
            others.append(subprocess.Popen(["sleep", "301"], env={**env, **extra},
                                           start_new_session=True))
        wait_for(lambda: all(_carries(p.pid, MARK_VAR) for p in others), 10, "the env")
        (tmp_path / "go").write_text("")
        gate.join(timeout=30)
        assert not gate.is_alive()
        assert _gone(tmp_path / "own.pid")
        assert [p.poll() for p in others] == [None, None, None]  # alive
    finally:
        (tmp_path / "go").write_text("")
        for proc in others:
            proc.kill()
            proc.wait()


def _carries(pid: int, name: str) -> bool:
    try:
        return name in psutil.Process(pid).environ()
    except psutil.Error:
        return False
