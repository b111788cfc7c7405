"""The mark sweep (aidd.session.orphans.sweep): kills every process carrying the mark, a fork loop
included, and never one without it (issue 13 item 5)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest

from aidd.clock import SystemClock
from aidd.session.orphans import MARK_VAR, new_mark, sweep, sweep_run
from tests.fakes.storm import kill_everything, left_running
from tests.waiting import wait_for

STORM = 'trap "" TERM; echo READY; while :; do sleep 1011 & sleep 0.005; done'
SLEEPER = "echo READY; exec sleep 1012"


class Procs:
    """Shell scripts started for one test; each carries TEST_TAG so none outlives it."""

    def __init__(self) -> None:
        self.tag = new_mark()
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self, script: str, mark: str | None, iteration: str = "1") -> int:
        env = {**os.environ, "TEST_TAG": self.tag, "AIDD_ITERATION": iteration}
        if mark is not None:
            env[MARK_VAR] = mark
        proc = subprocess.Popen(["sh", "-c", script], env=env, stdout=subprocess.PIPE,
                                start_new_session=True)
        self.started.append(proc)
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"READY\n"
        proc.stdout.close()
        # READY comes before `exec sleep`, and mid-exec /proc/PID/environ reads empty for a
        # moment: a sweep then would miss the process for a reason no user meets. The shell's
        # own environment carries the tag too, so the exec is waited for by the name.
        execs = "exec " in script
        wait_for(lambda: proc.pid in left_running("TEST_TAG", self.tag) and (
            not execs or _name(proc.pid) != "sh"), timeout=5)
        return proc.pid

    def left(self) -> list[int]:
        return sorted(left_running("TEST_TAG", self.tag))

    def close(self) -> None:
        kill_everything("TEST_TAG", self.tag)
        for proc in self.started:
            proc.wait()


@pytest.fixture
def procs() -> Iterator[Procs]:
    started = Procs()
    yield started
    started.close()


def test_sweep_kills_a_marked_fork_loop_and_nothing_unmarked(procs: Procs) -> None:
    mark = new_mark()
    procs.start(STORM, mark)
    bystander = procs.start(SLEEPER, None)
    stranger = procs.start(SLEEPER, new_mark())
    killed = sweep(mark, SystemClock())
    assert len(killed) > 1  # the loop and what it had forked
    assert left_running(MARK_VAR, mark) == []
    assert procs.left() == sorted([bystander, stranger])


def test_sweep_kills_only_what_select_picks(procs: Procs) -> None:
    mark = new_mark()
    kept = procs.start(SLEEPER, mark, iteration="1")
    gone = procs.start(SLEEPER, mark, iteration="2")
    killed = sweep(mark, SystemClock(), lambda o: o.iteration == "2")
    assert [o.pid for o in killed] == [gone]
    assert procs.left() == [kept]


def test_the_run_end_sweep_spares_what_keep_children_kept(procs: Procs) -> None:
    mark = new_mark()
    pid = procs.start(SLEEPER, mark)
    assert sweep_run({MARK_VAR: mark}, True, SystemClock()) == []
    assert procs.left() == [pid]
    (warning,) = sweep_run({MARK_VAR: mark}, False, SystemClock())
    assert warning.startswith(f"killed 1 processes still carrying this run's mark: {pid} ")
    assert procs.left() == []


def test_an_empty_mark_sweeps_nothing(procs: Procs) -> None:
    pid = procs.start(SLEEPER, "")
    assert sweep("", SystemClock()) == []
    assert procs.left() == [pid]


def _name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as comm:
            return comm.read().strip()
    except OSError:
        return ""
