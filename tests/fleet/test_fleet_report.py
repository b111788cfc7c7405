"""`aidd fleet report`: one report across the fleet's projects, from each project's own
`aidd --report --json`; a project with no report on this machine is a line saying why (exit 1).
No Temporal server: the projects ran plain aidd."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.fleet.lab import Lab, working

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
