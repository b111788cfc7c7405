"""`aidd fleet report`: one report across the fleet's projects, from each project's own
`aidd --report --json` when its run was on this machine (or the server knows of none), from the
server's record when it ran on another machine; a project with no report from anywhere is a line
saying why (exit 1). The first tests run no server (the projects ran plain aidd), and the report
starts none."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fleet.lab import Lab, working
from tests.waiting import wait_for

pytest.importorskip("temporalio", reason="the fleet extra is not installed")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]


def _run_aidd(lab: Lab, entry: dict[str, Any]) -> None:
    argv = [sys.executable, "-m", "aidd", "--project-dir", entry["path"], "--cli", "opencode",
            *entry["args"]]
    done = subprocess.run(argv, env={**lab.env, **entry["env"]}, capture_output=True,
                          text=True, timeout=90, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr


def _own_report(lab: Lab, path: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "aidd", "--project-dir", path, "--report",
                           "--json"], env=lab.env, capture_output=True, text=True, timeout=60,
                          check=True)
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_one_report_across_the_fleets_projects(lab: Lab) -> None:
    one = lab.project("one", working(0))
    two = lab.project("two", [{"say": "broken"}, {"exit": 3}], working(0),
                      args=["--max-iterations", "2"])
    for entry in (one, two):
        _run_aidd(lab, entry)
    away = lab.git_project("away", working(0))  # never run on this machine
    fleet = str(lab.fleet_file({"one": one, "two": two, "away": away}))

    res = lab.run("report", fleet, "--json")
    assert res.code == 1, res.err  # one project has no report here
    got = json.loads(res.out)
    rows = {row["project"]: row for row in got["projects"]}
    assert (got["schema"], got["fleet"]) == (1, "lab")
    assert rows["away"]["error"] == "not checked out on this machine"
    for name, entry in (("one", one), ("two", two)):
        own = _own_report(lab, entry["path"])
        row = rows[name]
        assert row["error"] is None
        assert row["last_run"]["reason"] == own["runs"][-1]["reason"] == "done"
        assert row["attempts"] == own["attempts"]["total"]
        assert row["features_passing"] == own["features"]["passing_now"] == 0
        assert row["cost_usd"] == own["usage"]["cost_usd"]["total"]
        assert row["report"]["attempts"] == own["attempts"]
    assert [(r["result"], r["count"]) for r in rows["two"]["by_result"]] == [(0, 1), (3, 1)]
    assert got["total"] == {"projects": 3, "reported": 2, "attempts": 3, "features_passing": 0,
                            "features_total": 2, "became_passing": 0,
                            "cost_usd": rows["one"]["cost_usd"] + rows["two"]["cost_usd"]}

    text = lab.run("report", fleet).out.splitlines()  # in the fleet file's order
    assert text[0] == "fleet lab: 3 projects"
    assert text[1] == "away  no report: not checked out on this machine"
    assert text[2].startswith("one   done (exit 0) at ")
    assert text[2].endswith(" · attempts 1 (0×1) · features 0/1 passing (+0) · $0.25")
    assert "attempts 2 (0×1 3×1)" in text[3]
    assert text[4] == "total  2/3 reported · attempts 3 · features 0/2 passing (+0) · $0.50"


def test_with_no_server_running_the_report_starts_none(lab: Lab) -> None:
    one = lab.project("one", working(0))
    _run_aidd(lab, one)
    fleet = str(lab.fleet_file({"one": one}))
    res = lab.run("report", fleet, "--json")
    assert res.code == 0, res.err
    got = json.loads(res.out)
    row = got["projects"][0]
    assert (row["source"], row["hosts"], row["state"], row["attempts"]) == ("local", None,
                                                                          None, 1)
    assert got["note"] == ("no fleet server is running here: reported from this machine's "
                           "checkouts alone")
    assert not (lab.data_dir / "server.json").exists()  # nor its pid: no server started
    assert not (lab.data_dir / "fleet.db").exists()
    text = lab.run("report", fleet).out.splitlines()
    assert text[-1] == ("note: no fleet server is running here: reported from this machine's "
                        "checkouts alone")

    closed = socket.socket()  # a port nothing listens on: the server named is unreachable
    closed.bind(("127.0.0.1", 0))
    address = f"127.0.0.1:{closed.getsockname()[1]}"
    began = time.monotonic()
    res = lab.run("report", fleet, "--json", "--server", address)
    closed.close()
    assert time.monotonic() - began < 60  # refused at once: no wait for a server
    assert res.code == 0, res.err
    got = json.loads(res.out)
    assert got["projects"][0]["source"] == "local"
    assert got["note"].startswith("the fleet server could not be asked (cannot connect to "
                                  f"the Temporal server at {address}: ")
    assert not (lab.data_dir / "server.json").exists()


def _fleet_file(lab: Lab, name: str, projects: dict[str, Any]) -> str:
    """A file of the fleet `lab` (the same fleet, another set of its projects)."""
    return str(lab.fleet_file(projects).rename(lab.root / name))


def _costs(invocations: list[list[dict[str, Any]]]) -> float:
    return sum(step["finish"]["cost"] for steps in invocations for step in steps
               if "finish" in step)


def test_a_run_on_another_machine_is_reported_from_the_server(lab: Lab) -> None:
    """`here` runs on this machine (a worker of `up`): reported from its aidd --report here.
    `away`, a git project, runs on the worker of another machine (its own data dir and name,
    AIDD_FLEET_HOST=m2): its events.jsonl are there only, so it is reported from the server,
    with the results and cost of what its agent did there."""
    here = lab.project("here", working(0))
    assert lab.run("up", _fleet_file(lab, "here.yaml", {"here": here}), timeout=90).code == 0
    broken = [{"say": "broken"}, {"exit": 3}]
    dearer = [*working(0)[:-1], {"finish": {"cost": 0.5}}]
    script = [broken, dearer, broken]
    away = lab.git_project("away", *script, args=["--max-iterations", "3"])
    other = lab.machine("m2")
    address = lab.server_address()
    worker = lab.start("worker", "--server", address, "--slots", "1", name="worker", env=other)
    started = lab.run("up", _fleet_file(lab, "away.yaml", {"away": away}), "--server", address)
    assert started.code == 0, started.err
    wait_for(lambda: lab.status()["away"]["state"] == "done", 90, "away done on m2")
    ran = lab.fakes["away"].records()
    checkout = Path(other["XDG_DATA_HOME"]) / "aidd" / "fleet" / "checkouts" / "lab" / "away"
    assert [r["cwd"] for r in ran] == [str(checkout)] * len(script)  # all of it on m2
    both = _fleet_file(lab, "both.yaml", {"here": here, "away": away})

    res = lab.run("report", both, "--json")  # no --server: the local one runs, it is asked
    assert res.code == 0, res.out + res.err
    got = json.loads(res.out)
    assert got["note"] is None
    rows = {row["project"]: row for row in got["projects"]}
    row = rows["away"]
    assert (row["source"], row["hosts"], row["state"], row["error"]) == ("server", ["m2"],
                                                                         "done", None)
    assert [(r["result"], r["count"]) for r in row["by_result"]] == [(0, 1), (3, 2)]
    assert row["attempts"] == len(ran) == 3
    assert row["cost_usd"] == _costs(script) == 0.5
    assert (row["features_passing"], row["features_total"]) == (0, 1)
    assert (row["last_run"]["reason"], row["last_run"]["exit_code"]) == ("done", 0)
    events = [json.loads(line) for line in
              (checkout / ".automaker" / "events.jsonl").read_text().splitlines()]
    ends = [e for e in events if e["event"] == "iteration_end"]
    assert [e["result"] for e in ends] == [3, 0, 3]  # as m2's own record has them
    assert row["last_run"]["run"] == [e for e in events if e["event"] == "run_start"][-1]["run"]
    assert row["last_run"]["ended_at"] == events[-1]["ts"]  # its run_end
    assert (row["report"], row["became_passing"]) == (None, None)
    assert (lab.data_dir / "checkouts").exists() is False  # nothing of it on this machine
    own = _own_report(lab, here["path"])
    mine = rows["here"]
    assert (mine["source"], mine["hosts"], mine["state"]) == ("local", [socket.gethostname()],
                                                              "done")
    assert mine["attempts"] == own["attempts"]["total"] == 1
    assert mine["cost_usd"] == own["usage"]["cost_usd"]["total"]
    assert got["total"]["attempts"] == 4
    assert got["total"]["cost_usd"] == 0.75

    text = lab.run("report", both).out.splitlines()  # the fleet file's order (sorted)
    assert text[1].startswith("away  done (exit 0) at ")
    assert text[1].endswith(" on m2 · attempts 3 (0×1 3×2) · features 0/1 passing · $0.50 "
                            "(from the server)")
    assert text[2].startswith("here  done (exit 0) at ")
    assert text[2].endswith(" · attempts 1 (0×1) · features 0/1 passing (+0) · $0.25")
    assert text[3] == "total  2/2 reported · attempts 4 · features 0/2 passing (+0) · $0.75"
    worker.terminate()
    assert worker.wait(60) == 0, lab.output("worker")
