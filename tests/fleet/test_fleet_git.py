"""A `git` project of the fleet, with a local bare repository as its remote: each iteration's
work is pushed to the project's branch, a retry on another worker (another data dir, connected
with --server) resumes from the pushed state, and a push rejected because the branch moved on
ends that attempt without overwriting the newer work."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.fleet.lab import Lab, working
from tests.waiting import wait_for

pytest.importorskip("temporalio", reason="the fleet extra is not installed")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]


def _writes(path: str, text: str, *, after: float = 0) -> list[dict[str, object]]:
    """An attempt writing `path` (after `after` s: past the fleet's look at the last one)."""
    return [{"sleep": after}, {"write_file": path, "text": text}, *working(0)]


def _events(checkout: Path, name: str) -> list[dict[str, Any]]:
    lines = (checkout / ".automaker" / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == name]


def _ends(checkout: Path) -> list[int]:
    """The results of the iteration_end events in a checkout's events.jsonl."""
    return [e["result"] for e in _events(checkout, "iteration_end")]


def _pushed(lab: Lab, project: str, subject: str) -> bool:
    return any(c.subject == f"aidd fleet: {project}, {subject}" for c in lab.branch_log(project))


def test_each_iteration_is_pushed_to_the_projects_branch(lab: Lab) -> None:
    # The second agent writes at once, then works on: iteration 1's commit is still exactly
    # its end (aidd's 001-end checkpoint), whatever the next agent wrote before the fleet looked.
    second = [{"write_file": "two.txt", "text": "2\n"}, {"sleep": 1.5}, *working(0)]
    projects = {"g0": lab.git_project("g0", _writes("one.txt", "1\n"), second,
                                      args=["--max-iterations", "2"])}
    up = lab.start("up", str(lab.fleet_file(projects)))
    assert up.wait(90) == 0, lab.output()
    ours = [c for c in lab.branch_log("g0") if c.author == "aidd fleet"]
    assert ours[0].subject == "aidd fleet: g0, iteration 1"
    assert ours[1].subject.startswith("aidd fleet: g0, iteration 2")  # maybe ", end of run"
    assert "one.txt" in ours[0].files
    assert "two.txt" not in ours[0].files
    assert "two.txt" in ours[1].files
    checkout = lab.data_dir / "checkouts" / "lab" / "g0"
    ends = {e["label"]: e["commit"] for e in _events(checkout, "checkpoint")}
    assert lab.git(lab.remote("g0"), "rev-parse", f"{ours[0].sha}^{{tree}}") == \
        lab.git(checkout, "rev-parse", f"{ends['001-end']}^{{tree}}")
    assert lab.git(checkout, "status", "--porcelain") == ""  # settled on the last commit
    assert lab.git(checkout, "rev-parse", "HEAD") == lab.branch_log("g0")[-1].sha
    files = lab.branch_files("g0")
    assert {"README.md", "one.txt", "two.txt"} <= set(files)
    assert not [f for f in files if f.startswith((".automaker/iterations",
                                                   ".automaker/events.jsonl",
                                                   ".automaker/aidd"))]
    row = lab.status()["g0"]
    assert (row["state"], row["pushed"]) == ("done", lab.branch_log("g0")[-1].sha)
    log = (lab.data_dir / "logs" / "lab" / "g0.log").read_text()
    assert f"aidd fleet: iteration 1: pushed {ours[0].sha[:12]} to aidd/lab" in log


def test_a_retry_on_another_worker_resumes_from_the_pushed_work(lab: Lab) -> None:
    hang = [{"mark": "hang"}, {"sleep": 60}]
    resumed = [{"snapshot": "one.txt", "as": "seen-one"},
               *_writes("three.txt", "3\n")]
    projects = {"k1": lab.git_project("k1", _writes("one.txt", "first attempt\n"), hang,
                                      resumed, args=["--max-iterations", "2"])}
    up = lab.start("up", str(lab.fleet_file(projects)))
    wait_for(lambda: lab.mark("k1", "hang") and _pushed(lab, "k1", "iteration 1"), 60,
             "iteration 1 pushed, iteration 2 under way")
    up.kill()  # kill -9 of the first worker, mid-run
    up.wait()
    other = lab.machine("m2")
    worker = lab.start("worker", "--server", lab.server_address(), "--slots", "1",
                       name="worker", env=other)
    wait_for(lambda: lab.status()["k1"]["state"] == "done", 90, "the retry's end")
    row = lab.status()["k1"]
    assert (row["exit_code"], row["attempt"]) == (0, 2)
    assert (row["host"], row["hosts"]) == ("m2", [socket.gethostname(), "m2"])
    assert sum(row["by_result"].values()) >= 1
    seen = lab.fakes["k1"].record_dir / "seen-one"
    assert seen.read_text() == "first attempt\n"  # the retry started from the pushed state
    cwds = {r["cwd"] for r in lab.fakes["k1"].records()}
    assert str(Path(other["XDG_DATA_HOME"]) / "aidd" / "fleet" / "checkouts" / "lab" / "k1") \
        in cwds
    assert {"one.txt", "three.txt"} <= set(lab.branch_files("k1"))
    # The report: the run was partly here (a checkout with the first attempt's events) and
    # partly on m2, so its line is the server's, over both machines' attempts.
    res = lab.run("report", str(lab.root / "fleet.yaml"), "--json")
    assert res.code == 0, res.err
    got = json.loads(res.out)["projects"][0]
    assert (got["source"], got["hosts"]) == ("server", [socket.gethostname(), "m2"])
    ends = {name: _ends(base / "aidd" / "fleet" / "checkouts" / "lab" / "k1")
            for name, base in (("here", lab.data_dir.parent.parent),
                               ("m2", Path(other["XDG_DATA_HOME"])))}
    # All of m2's; of here, what the killed worker's heartbeats told the server before it died.
    counted = sum(r["count"] for r in got["by_result"])
    assert len(ends["m2"]) <= counted <= len(ends["m2"]) + len(ends["here"])
    assert counted == got["attempts"]
    worker.terminate()
    assert worker.wait(60) == 0, lab.output("worker")


def test_a_push_rejected_because_the_branch_moved_on_ends_the_attempt(lab: Lab) -> None:
    second = [{"mark": "second"}, *_writes("two.txt", "2\n", after=4)]
    projects = {"s1": lab.git_project("s1", _writes("one.txt", "1\n"), second,
                                      args=["--max-iterations", "4"])}
    up = lab.start("up", str(lab.fleet_file(projects)))
    wait_for(lambda: lab.mark("s1", "second") and _pushed(lab, "s1", "iteration 1"), 60,
             "iteration 1 pushed, iteration 2 under way")
    newer = lab.push_elsewhere("s1", "newer.txt")
    assert up.wait(90) == 6, lab.output()
    row = lab.status()["s1"]
    assert (row["state"], row["exit_code"]) == ("stopped", 6)
    assert row["message"].startswith("stale: the branch moved on")
    assert lab.branch_log("s1")[-1].sha == newer  # not overwritten
    assert "two.txt" not in lab.branch_files("s1")
    log = (lab.data_dir / "logs" / "lab" / "s1.log").read_text()
    assert "push rejected, the branch moved on" in log
