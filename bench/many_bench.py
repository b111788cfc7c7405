"""Many aidd runs side by side on one machine (issue 33): aidd's own share per iteration with
1, 5 and 20 plain `aidd` runs at once, each on its own git project with the fake agent of
overhead_bench.py (dash builtins only).

    python bench/many_bench.py [--quick]

The share is CPU, not wall time: 20 runs on 2 cores wait for each other, which says nothing of
what one run costs. Per run: the CPU of aidd and of everything it started (git included; from
wait4), minus the fake agent's own CPU run as often alone, over the iterations. Target: the
median share with 20 runs at once within 2x of a single run's.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import Result, print_results
from bench.overhead_bench import BASE, aidd_env, fresh_project, rendered_prompt, shim_dir

ROOT = BASE.parent / "many"
ITERATIONS = 10
TARGET_RATIO = 2.0


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


def agent_cpu(iterations: int) -> float:
    """The fake agent's CPU for `iterations` runs alone (prompt on stdin, in a project)."""
    env = aidd_env(10**9)
    scratch = ROOT / "alone"
    shutil.rmtree(scratch, ignore_errors=True)
    (scratch / ".automaker").mkdir(parents=True)
    prompt = rendered_prompt()
    before = _cpu(resource.getrusage(resource.RUSAGE_CHILDREN))
    for _ in range(iterations):
        subprocess.run([str(shim_dir() / "opencode")], input=prompt, cwd=scratch, env=env,
                       capture_output=True, check=True)
    return _cpu(resource.getrusage(resource.RUSAGE_CHILDREN)) - before


def side_by_side(count: int) -> tuple[list[float], float]:
    """`count` runs started at once: each one's CPU (aidd and what it started) per iteration,
    and the wall time until the last one ended."""
    env = aidd_env(ITERATIONS)
    projects = [fresh_project(env, ROOT / f"p{i:02d}") for i in range(count)]
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-m", "aidd", "--project-dir", str(p), "--cli",
                               "opencode"], env=env, cwd=p, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for p in projects]
    cpu = []
    for proc in procs:
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 6:  # the fake writes .stop at its last iteration
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            sys.exit(f"bench: aidd exited {proc.returncode}: {err[-500:]}")
        if proc.stderr:
            proc.stderr.close()
        cpu.append(_cpu(usage))
    return cpu, time.perf_counter() - start


def run(quick: bool) -> list[Result]:
    ROOT.mkdir(parents=True, exist_ok=True)
    counts, repeat = ((1, 5, 20), 1) if quick else ((1, 5, 20), 3)
    agent = statistics.median(agent_cpu(ITERATIONS) for _ in range(3)) / ITERATIONS
    shares: dict[int, list[float]] = {n: [] for n in counts}
    walls: dict[int, list[float]] = {n: [] for n in counts}
    for _ in range(repeat):
        for n in counts:
            cpu, wall = side_by_side(n)
            shares[n] += [c / ITERATIONS - agent for c in cpu]
            walls[n].append(wall)
    shutil.rmtree(ROOT, ignore_errors=True)
    single = shares[counts[0]]
    rows = []
    for n in counts:
        last = n == counts[-1]
        ratio = statistics.median(shares[n]) / statistics.median(single)
        rows.append(Result(
            group="many", case=f"aidd's CPU per iteration, {n} run(s) side by side",
            samples=[s * 1000 for s in shares[n]], unit="ms CPU",
            floor="the same, 1 run alone" if n > 1 else "",
            floor_samples=[s * 1000 for s in single] if n > 1 else [],
            target=f"<= {TARGET_RATIO:.0f}x one run" if last else "",
            met=ratio <= TARGET_RATIO if last else None,
            note=(f"{ITERATIONS} iterations a run, checkpoints on; the fake agent's own "
                  f"{agent * 1000:.1f} ms CPU an iteration taken off; all {n} done in "
                  f"{statistics.median(walls[n]):.1f} s wall"),
        ))
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    print_results(run(quick=parser.parse_args().quick))
