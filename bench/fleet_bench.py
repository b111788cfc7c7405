"""Benchmark `aidd fleet` (issue 19): what a project start costs on top of plain aidd, and what
the fleet itself costs while 20 projects wait on their agents.

    python bench/fleet_bench.py [--quick]

- start: wall from the command's launch to the fake agent's first mark ({"mark": "start"}),
  plain `aidd` against `aidd fleet up` of one project with the local server already running
  (the steady case) and with no server running (the first `up`: the server's start included).
  The difference is the scheduling overhead per project start.
- 20 idle-waiting projects: `aidd fleet up` of 20 projects whose fake agents sleep; once all
  20 are running, the `up` process's (the client and in-process worker's) RSS and the CPU it
  used over 10 s, and the same for the local Temporal server. aidd's own runs are not counted
  (each is the plain aidd of the loop group).
  Then `aidd fleet watch` in a pty of 80x24 over the same fleet (issue 30): its CPU and RSS
  over the next 10 s, and the server's CPU meanwhile (one status query every 2 s). The fleet's
  cost per waiting project (issue 33 asks < 0.5 % of a core): `up` plus the server, divided
  by 20.
Needs the fleet extra; without temporalio it reports nothing.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psutil

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import WORK, Result, print_results
from bench.watch_bench import Watched
from tests.fleet.lab import Lab, lab_in, working
from tests.waiting import wait_for

SLEEP_S = 120.0  # the idle agents' sleep: far longer than the measurement
WINDOW_S = 10.0
PER_PROJECT_PCT = 0.5  # issue 33: the fleet's CPU per waiting project, % of a core
WATCH_PCT = 1.0  # issue 30: a view of an idle run, % of a core


def _to_start(lab: Lab, name: str, argv: list[str]) -> float:
    """Seconds from launching `argv` to the agent's start mark; the run is then stopped."""
    launched = time.monotonic()
    proc = subprocess.Popen(argv, env=lab.env, cwd=lab.root, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: lab.mark(name, "start"), 120, f"{name} started")
    mark = lab.mark(name, "start")
    assert mark is not None
    proc.wait(120)
    return mark - launched


def _start_samples(root: Path, repeat: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {"plain": [], "warm": [], "cold": []}
    root.mkdir(parents=True)
    with lab_in(root) as lab:
        for i in range(repeat):
            for kind in samples:
                name = f"{kind}{i}"
                entry = lab.project(name, working(0))
                if kind == "plain":
                    argv = [sys.executable, "-m", "aidd", "--project-dir", entry["path"],
                            "--cli", "opencode", *entry["args"]]
                    lab.env.update(entry["env"])
                else:
                    if kind == "cold":
                        lab.run("down")
                    fleet = lab.fleet_file({name: entry})
                    argv = [sys.executable, "-m", "aidd", "fleet", "up", str(fleet)]
                samples[kind].append(_to_start(lab, name, argv))
    return samples


def _cpu_pct(procs: list[psutil.Process], seconds: float,
             meanwhile: Callable[[float], object] = time.sleep) -> list[float]:
    """Each process's CPU in % of a core over `seconds` of `meanwhile`."""
    before = [p.cpu_times() for p in procs]
    meanwhile(seconds)
    after = [p.cpu_times() for p in procs]
    return [((a.user + a.system) - (b.user + b.system)) / seconds * 100
            for a, b in zip(after, before, strict=True)]


def _idle_fleet(root: Path, count: int) -> dict[str, float]:
    """The RSS (MiB) and CPU (% of a core) of `up`, the server and `aidd fleet watch`."""
    root.mkdir(parents=True)
    with lab_in(root) as lab:
        projects = {f"i{i}": lab.project(f"i{i}", working(SLEEP_S)) for i in range(count)}
        up = lab.start("up", str(lab.fleet_file(projects, heartbeat_timeout=30)), "--slots",
                       str(count))
        wait_for(lambda: all(lab.mark(n, "start") for n in projects), 240, "all agents")
        time.sleep(3)  # the start-up's last heartbeats
        pid = lab.server_pid()
        assert pid is not None
        procs = [psutil.Process(up.pid), psutil.Process(pid)]
        got = dict(zip(("up cpu", "server cpu"), _cpu_pct(procs, WINDOW_S), strict=True))
        got.update(zip(("up rss", "server rss"), (p.memory_info().rss / 2**20 for p in procs),
                       strict=True))
        watch = Watched(["fleet", "watch"], lab.env)
        try:
            watch.until(b"i0 ", 60)
            watch.drain(3.0)  # its first queries
            watched = psutil.Process(watch.pid)
            got["watch cpu"], got["server cpu watched"] = _cpu_pct(
                [watched, procs[1]], WINDOW_S, watch.drain)
            got["watch rss"] = watched.memory_info().rss / 2**20
        finally:
            watch.close()
        lab.run("stop", "--now")
        up.wait(120)
        return got


def run(quick: bool) -> list[Result]:
    try:
        import temporalio  # noqa: F401 (only whether the extra is there)
    except ImportError:
        return []
    WORK.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="fleet-", dir=WORK))
    try:
        starts = _start_samples(root / "start", 2 if quick else 5)
        count = 5 if quick else 20
        idle = _idle_fleet(root / "idle", count)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    plain = starts["plain"]
    group = "fleet"
    per_project = (idle["up cpu"] + idle["server cpu"]) / count
    return [
        Result(group, "project start to agent start: `aidd fleet up`, server running",
               starts["warm"], floor="plain `aidd`", floor_samples=plain,
               note="one project; the up process imports temporalio, connects, starts the "
                    "workflows and its worker, which runs the activity that starts aidd"),
        Result(group, "project start to agent start: `aidd fleet up`, no server yet",
               starts["cold"], floor="plain `aidd`", floor_samples=plain,
               note="includes starting Temporal's dev server on its database"),
        Result(group, f"`aidd fleet up` RSS, {count} projects waiting on their agents",
               [idle["up rss"]], unit="MiB"),
        Result(group, f"`aidd fleet up` CPU, {count} projects waiting on their agents",
               [idle["up cpu"]], unit="% of a core",
               note=f"over {WINDOW_S:.0f} s: a heartbeat a second per project, event reads"),
        Result(group, f"local Temporal server RSS, {count} projects running",
               [idle["server rss"]], unit="MiB"),
        Result(group, f"local Temporal server CPU, {count} projects running",
               [idle["server cpu"]], unit="% of a core"),
        Result(group, "`aidd fleet up` + server CPU per waiting project", [per_project],
               unit="% of a core", target=f"< {PER_PROJECT_PCT:g} %",
               met=per_project < PER_PROJECT_PCT, note="issue 33; aidd's own runs not counted"),
        Result(group, f"`aidd fleet watch` CPU, {count} projects", [idle["watch cpu"]],
               unit="% of a core", target=f"<= {WATCH_PCT:g} %",
               met=idle["watch cpu"] <= WATCH_PCT,
               note=f"80x24 pty, over {WINDOW_S:.0f} s: one status query every 2 s"),
        Result(group, f"`aidd fleet watch` RSS, {count} projects", [idle["watch rss"]],
               unit="MiB"),
        Result(group, "local Temporal server CPU while `aidd fleet watch` asks",
               [idle["server cpu watched"]], unit="% of a core",
               note=f"the same {count} projects"),
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    print_results(run(parser.parse_args().quick))
