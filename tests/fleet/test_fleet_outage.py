"""The server out of reach while a worker runs a project: its process stopped (SIGSTOP) for
10 s, so the worker's calls hang as on a lost network rather than being refused, then
continued. aidd runs on meanwhile; what follows depends on the heartbeat timeout."""

from __future__ import annotations

import os
import signal
import time

import pytest

from tests.fleet.lab import Lab, working
from tests.integration.runs import events
from tests.waiting import wait_for

pytest.importorskip("temporalio", reason="the fleet extra is not installed")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]
OUTAGE_S = 10


def _outage(lab: Lab) -> None:
    server = lab.server_pid()
    assert server is not None
    os.kill(server, signal.SIGSTOP)
    try:
        time.sleep(OUTAGE_S)  # the outage itself: nothing to wait for
    finally:
        os.kill(server, signal.SIGCONT)


def test_an_outage_shorter_than_the_heartbeat_timeout_changes_nothing(lab: Lab) -> None:
    projects = {"o0": lab.project("o0", working(OUTAGE_S + 5))}
    up = lab.start("up", str(lab.fleet_file(projects, heartbeat_timeout=20)))
    wait_for(lambda: lab.mark("o0", "start"), 60, "the agent started")
    _outage(lab)
    assert up.wait(90) == 0, lab.output()
    row = lab.status()["o0"]
    assert (row["state"], row["exit_code"], row["attempt"]) == ("done", 0, 1)
    assert len(events(lab.root / "projects" / "o0", "run_start")) == 1


def test_an_outage_longer_than_the_heartbeat_timeout_retries_the_attempt(lab: Lab) -> None:
    projects = {"o1": lab.project("o1", working(OUTAGE_S + 15), working(0),
                                  args=["--max-iterations", "2"])}
    up = lab.start("up", str(lab.fleet_file(projects, heartbeat_timeout=3)))
    wait_for(lambda: lab.mark("o1", "start"), 60, "the agent started")
    _outage(lab)
    assert up.wait(120) == 0, lab.output()
    row = lab.status()["o1"]
    assert (row["state"], row["exit_code"], row["attempt"]) == ("done", 0, 2)
    # The server, back, timed the attempt out and retried it; the cut-off attempt, told at
    # its next heartbeat that it is gone, stopped its aidd gracefully (6) after the agent's
    # attempt; the retry waited for aidd's lock, then ran aidd again for the run's one
    # iteration left.
    ends = events(lab.root / "projects" / "o1", "run_end")
    assert [e["exit_code"] for e in ends] == [6, 0]
    starts = events(lab.root / "projects" / "o1", "run_start")
    assert len({e["pid"] for e in starts}) == 2
    assert starts[1]["limits"]["max_iterations"] == 1
    assert len(events(lab.root / "projects" / "o1", "iteration_end")) == 2


def test_a_retry_with_no_iteration_left_starts_no_aidd(lab: Lab) -> None:
    projects = {"o2": lab.project("o2", working(OUTAGE_S + 15), working(0))}  # 1 iteration
    up = lab.start("up", str(lab.fleet_file(projects, heartbeat_timeout=3)))
    wait_for(lambda: lab.mark("o2", "start"), 60, "the agent started")
    _outage(lab)
    assert up.wait(120) == 0, lab.output()
    row = lab.status()["o2"]
    assert (row["state"], row["exit_code"], row["attempt"]) == ("done", 0, 2)
    assert row["message"] == ("--max-iterations 1 was used up by the run's earlier attempts: "
                              "no aidd started")
    assert [e["exit_code"] for e in events(lab.root / "projects" / "o2", "run_end")] == [6]
