"""The fleet end to end, offline, on Temporal's local server, with fake agents: the pool cap
measured from the agents' own start and end marks, stop, a configuration error not retried, and
status showing each project's true iteration and result."""

from __future__ import annotations

import subprocess
import time

import psutil
import pytest

from aidd.fleet import server
from tests.fleet.lab import Lab, max_overlap, working
from tests.integration.runs import events
from tests.waiting import wait_for

pytest.importorskip("temporalio", reason="the fleet extra is not installed")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]


def test_a_pool_cap_of_2_holds_5_projects_to_2_agents_at_once(lab: Lab) -> None:
    projects = {f"p{i}": lab.project(f"p{i}", working(1.5), key="key-a") for i in range(5)}
    up = lab.start("up", str(lab.fleet_file(projects, pools={"key-a": 2})), "--slots", "5")
    assert up.wait(120) == 0, lab.output()
    assert max_overlap(lab.spans(projects)) == 2  # never more; and the cap was used
    status = lab.status()
    assert {row["state"] for row in status.values()} == {"done"}
    assert all(row["exit_code"] == 0 and row["iteration"] == 1 for row in status.values())


def test_stop_ends_every_run_with_6_and_leaves_no_process(lab: Lab) -> None:
    projects = {f"s{i}": lab.project(f"s{i}", working(2), args=["--max-iterations", "50"])
                for i in range(3)}
    up = lab.start("up", str(lab.fleet_file(projects)))
    wait_for(lambda: all(lab.mark(n, "start") for n in projects), 60, "every agent started")
    res = lab.run("stop")
    assert res.code == 0, res.err
    assert sorted(res.out.splitlines()) == [
        f"{n}: stop requested, after its current attempt" for n in sorted(projects)]
    assert up.wait(60) == 6, lab.output()
    status = lab.status()
    assert {(row["state"], row["exit_code"]) for row in status.values()} == {("stopped", 6)}
    wait_for(lambda: not lab.leftovers(), 10, "no aidd or agent left")


def test_stop_now_sigterms_and_ends_with_124(lab: Lab) -> None:
    projects = {"n0": lab.project("n0", working(60))}
    up = lab.start("up", str(lab.fleet_file(projects)))
    wait_for(lambda: lab.mark("n0", "start"), 60, "the agent started")
    assert lab.run("stop", "--now", "n0").code == 0
    assert up.wait(60) == 6, lab.output()
    row = lab.status()["n0"]
    assert (row["state"], row["exit_code"]) == ("stopped", 124)
    wait_for(lambda: not lab.leftovers(), 10, "no aidd or agent left")


def test_a_bad_config_fails_once_and_is_not_retried(lab: Lab) -> None:
    projects = {"bad": lab.project("bad", working(0), args=["--max-iterations", "many"]),
                "good": lab.project("good", working(0))}
    up = lab.start("up", str(lab.fleet_file(projects, max_attempts=3)))
    assert up.wait(90) == 1, lab.output()
    status = lab.status()
    bad = status["bad"]
    assert (bad["state"], bad["exit_code"]) == ("failed", 2)
    assert "a configuration error, not retried" in bad["message"]
    assert bad["attempt"] == 1
    assert lab.fakes["bad"].records() == []  # no agent ever ran
    assert status["good"]["state"] == "done"
    log = (lab.data_dir / "logs" / "lab" / "bad.log").read_text()
    assert log.count("--max-iterations") == 1  # aidd ran once: one error line


def test_status_shows_each_projects_true_iteration_and_result(lab: Lab) -> None:
    failing = [{"say": "broken"}, {"exit": 3}]
    third = [{"mark": "third"}, {"sleep": 60}]
    projects = {"t0": lab.project("t0", working(0), failing, third,
                                  args=["--max-iterations", "3"]),
                "t1": lab.project("t1", working(0), args=["--max-iterations", "1"])}
    up = lab.start("up", str(lab.fleet_file(projects)))
    wait_for(lambda: lab.mark("t0", "third"), 60, "the third attempt")

    def shown() -> bool:
        row = lab.status()["t0"]
        return row["state"] == "running" and (row["iteration"], row["last_result"]) == (3, 3)

    wait_for(shown, 30, "status: t0 running its iteration 3 after a result 3")
    done = lab.status()["t1"]
    assert (done["state"], done["iteration"], done["last_result"]) == ("done", 1, 0)
    assert done["cost_usd"] == 0.25
    text = lab.run("status").out
    assert any(line.startswith("t0  running   iteration   3  last result   3")
               for line in text.splitlines()), text
    lab.run("stop", "--now")
    assert up.wait(60) == 6


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_worker_killed_mid_run_leaves_no_agent_and_the_retry_completes(lab: Lab) -> None:
    projects = {"k0": lab.project("k0", [*working(60)], working(0))}
    fleet = str(lab.fleet_file(projects))
    up = lab.start("up", fleet)
    wait_for(lambda: lab.mark("k0", "start"), 60, "the agent started")
    agent = lab.fakes["k0"].records()[0]["pid"]
    up.kill()  # kill -9 of the worker: its aidd gets SIGTERM (parent-death signal)
    up.wait()
    wait_for(lambda: not _alive(agent), 20, "the orphaned agent's end")
    again = lab.start("up", fleet, name="up2")
    assert again.wait(90) == 0, lab.output("up2")
    assert "k0: resumed (already running)" in lab.output("up2")
    row = lab.status()["k0"]
    assert (row["state"], row["exit_code"], row["attempt"]) == ("done", 0, 2)
    starts = events(lab.root / "projects" / "k0", "run_start")
    ends = events(lab.root / "projects" / "k0", "run_end")
    assert len({e["pid"] for e in starts}) == 2  # the retry's aidd took the lock
    assert [e["exit_code"] for e in ends] == [124, 0]
    wait_for(lambda: not lab.leftovers(), 10, "no aidd or agent left")


def test_a_pool_slot_held_by_a_terminated_project_is_given_back(lab: Lab) -> None:
    projects = {f"h{i}": lab.project(f"h{i}", working(40), key="key-h") for i in range(2)}
    up = lab.start("up", str(lab.fleet_file(projects, pools={"key-h": 1})))
    wait_for(lambda: any(lab.mark(n, "start") for n in projects), 60, "one agent started")
    holder = next(n for n in projects if lab.mark(n, "start"))
    waiter = next(n for n in projects if n != holder)
    done = subprocess.run(  # from outside: no finally of the workflow runs, no release
        [str(server.find_binary(None)), "workflow", "terminate", "--address",
         lab.server_address(), "--workflow-id", f"aidd-fleet/lab/{holder}", "--reason", "test"],
        capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    terminated = time.monotonic()
    wait_for(lambda: lab.mark(waiter, "start"), 40, "the waiter's agent started")
    assert (lab.mark(waiter, "start") or 0) - terminated < 30  # HOLDER_CHECK is 10 s
    assert lab.run("stop", "--now").code == 0
    assert up.wait(90) == 1, lab.output()  # the terminated one counts as failed
    wait_for(lambda: not lab.leftovers(), 30, "no aidd or agent left")
