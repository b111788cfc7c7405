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
Needs the fleet extra; without temporalio it reports nothing.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import WORK, Result, print_results
from tests.fleet.lab import Lab, lab_in, working
from tests.waiting import wait_for

SLEEP_S = 120.0  # the idle agents' sleep: far longer than the measurement
WINDOW_S = 10.0


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


def _idle_fleet(root: Path, count: int) -> tuple[float, float, float, float]:
    """(up's RSS MiB, up's CPU % of a core, server's RSS MiB, server's CPU %)."""
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
        before = [p.cpu_times() for p in procs]
        time.sleep(WINDOW_S)
        after = [p.cpu_times() for p in procs]
        rss = [p.memory_info().rss / 2**20 for p in procs]
        cpu = [((a.user + a.system) - (b.user + b.system)) / WINDOW_S * 100
               for a, b in zip(after, before, strict=True)]
        lab.run("stop", "--now")
        up.wait(120)
        return rss[0], cpu[0], rss[1], cpu[1]


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
        up_rss, up_cpu, srv_rss, srv_cpu = _idle_fleet(root / "idle", count)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    plain = starts["plain"]
    group = "fleet"
    return [
        Result(group, "project start to agent start: `aidd fleet up`, server running",
               starts["warm"], floor="plain `aidd`", floor_samples=plain,
               note="one project; the up process imports temporalio, connects, starts the "
                    "workflows and its worker, which runs the activity that starts aidd"),
        Result(group, "project start to agent start: `aidd fleet up`, no server yet",
               starts["cold"], floor="plain `aidd`", floor_samples=plain,
               note="includes starting Temporal's dev server on its database"),
        Result(group, f"`aidd fleet up` RSS, {count} projects waiting on their agents",
               [up_rss], unit="MiB"),
        Result(group, f"`aidd fleet up` CPU, {count} projects waiting on their agents",
               [up_cpu], unit="% of a core", note=f"over {WINDOW_S:.0f} s: heartbeats every "
                                                  "5 s per project, event reads"),
        Result(group, f"local Temporal server RSS, {count} projects running", [srv_rss],
               unit="MiB"),
        Result(group, f"local Temporal server CPU, {count} projects running", [srv_cpu],
               unit="% of a core"),
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    print_results(run(parser.parse_args().quick))
