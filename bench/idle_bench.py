"""Idle supervision through the real `aidd` (SUP-15, SUP-24): CPU while silent, nudge
punctuality, time until the whole tree is dead after an idle kill.

    python bench/idle_bench.py [--quick]

- CPU: aidd's own CPU time (user + system, psutil) over a window in which the fake agent
  prints nothing (60 s; 10 s with --quick), as a percentage of one core. Target <= 0.5 %.
- Nudge lateness: a fake claude marks the moment of its last byte, then waits for the nudge
  on stdin and notes when it arrives; lateness = arrival - last byte - `--idle-nudge-timeout`.
  Target within +-0.1 s.
- Tree dead: a fake whose grandchild (double fork + setsid) and itself ignore SIGTERM goes
  silent; the kill is due at last byte + `--idle-timeout`; we poll every pid of the tree
  (zombies count as alive) and take the moment the last one is gone. Target <= grace (5 s)
  + 1 s. The same with a tree that obeys SIGTERM shows the time without the grace.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import FAKE_BIN, WORK, Result, env_with_repo, print_results
from tests.fakes.attempt import pid_alive

ROOT = WORK / "idle"
GRACE_S = 5.0
NUDGE_S = 1
IDLE_S = 1


class Run:
    """One `aidd` run on a fresh project with its own fake-agent script and records."""

    def __init__(self, name: str, cli: str, steps: list[dict[str, Any]], *args: str) -> None:
        base = ROOT / name
        shutil.rmtree(base, ignore_errors=True)
        self.project, self.records = base / "proj", base / "records"
        self.project.mkdir(parents=True)
        self.records.mkdir()
        (self.project / "README.md").write_text("bench\n")
        script = base / "script.json"
        script.write_text(json.dumps({"invocations": [steps]}))
        env = env_with_repo({
            "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "FAKE_AGENT_PYTHON": sys.executable, "FAKE_AGENT_SCRIPT": str(script),
            "FAKE_AGENT_RECORD": str(self.records), "HOME": str(base / "home"),
            "XDG_CONFIG_HOME": str(base / "home" / ".config"),
            "IS_SANDBOX": "1"})  # the fake claude as root: aidd refuses claude without it
        argv = [sys.executable, "-m", "aidd", "--project-dir", str(self.project), "--cli", cli,
                "--max-iterations", "1", "--no-clean", *args]
        self.err = base / "aidd.err"
        with self.err.open("wb") as err:
            self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=err)

    def wait_file(self, name: str, limit_s: float = 30) -> Path:
        path = self.records / name
        deadline = time.monotonic() + limit_s
        while not path.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"bench: {name} never appeared: {self.err.read_text()[-500:]}")
            time.sleep(0.01)
        return path

    def mark(self, name: str) -> float:
        return float(json.loads(self.wait_file(name).read_text())["monotonic"])

    def finish(self, limit_s: float = 60) -> None:
        self.proc.wait(timeout=limit_s)
        if self.proc.returncode != 0:
            sys.exit(f"bench: aidd exited {self.proc.returncode}")


def cpu_while_silent(window_s: float) -> Result:
    """With --liveness signals (CPU sampled every second, files watched) beside the
    output-only rule, the floor: both runs at once, so the machine's load is the same."""
    runs = [_silent_run(window_s, liveness) for liveness in ("signals", "output")]
    time.sleep(0.5)  # let the last output be handled
    mine = [psutil.Process(run.proc.pid) for run in runs]
    before, start = [me.cpu_times() for me in mine], time.monotonic()
    time.sleep(window_s)
    after, wall = [me.cpu_times() for me in mine], time.monotonic() - start
    for run in runs:
        run.finish()
    used = [(a.user + a.system) - (b.user + b.system) for a, b in zip(after, before, strict=True)]
    percent = [100 * u / wall for u in used]
    return Result("idle", f"aidd CPU while the agent is silent ({window_s:.0f} s)", [percent[0]],
                  unit="% core", floor="the same with `--liveness output`",
                  floor_samples=[percent[1]], target="<= 0.5 %", met=percent[0] <= 0.5,
                  note=f"{used[0] * 1000:.1f} ms CPU in {wall:.1f} s with --liveness signals "
                       f"(sampling the tree every second), {used[1] * 1000:.1f} ms without")


def _silent_run(window_s: float, liveness: str) -> Run:
    steps: list[dict[str, Any]] = [{"init": True}, {"say": "thinking"}, {"mark": "silent"},
                                   {"sleep": window_s + 3}, {"say": "back"}, {"finish": True}]
    run = Run(f"cpu-{liveness}", "opencode", steps, "--idle-timeout", "900",
              "--idle-nudge-timeout", "300", "--liveness", liveness)
    run.mark("silent")
    return run


def nudge_lateness(rounds: int) -> Result:
    steps: list[dict[str, Any]] = [{"init": True}, {"say": "working"}, {"mark": "m0"}]
    for i in range(1, rounds + 1):
        steps += [{"echo_stdin": 1}, {"mark": f"m{i}"}]
    steps.append({"result": {}})
    run = Run("nudge", "claude-code", steps, "--idle-nudge-timeout", str(NUDGE_S),
              "--idle-timeout", "60")
    run.finish()
    arrivals = [json.loads(ln)["at"] for ln in
                (run.records / "inv-000.stdin.jsonl").read_text().splitlines()]
    marks = [run.mark(f"m{i}") for i in range(rounds)]
    late = [arrival - mark - NUDGE_S for arrival, mark in zip(arrivals, marks, strict=True)]
    worst = max(abs(x) for x in late)
    return Result("idle", f"nudge lateness ({rounds} nudges at {NUDGE_S} s)", late,
                  target="within +-0.1 s", met=worst <= 0.1, note=f"worst {worst * 1000:.0f} ms")


def tree_dead(stubborn: bool, repeat: int) -> Result:
    samples = []
    for i in range(repeat):
        samples.append(_one_kill(f"kill-{stubborn}-{i}", stubborn))
    limit = (GRACE_S if stubborn else 0.0) + 1.0
    label = "ignoring SIGTERM" if stubborn else "obeying SIGTERM"
    return Result("idle", f"tree dead after the idle kill is due ({label})", samples,
                  target=f"<= {limit:.0f} s" if stubborn else "<= grace + 1 s",
                  met=max(samples) <= (GRACE_S + 1.0),
                  note="from last byte + --idle-timeout to the last pid gone")


def _one_kill(name: str, stubborn: bool) -> float:
    ignore = ["TERM"] if stubborn else []
    steps: list[dict[str, Any]] = [{"spawn": ["sleep", "1000"], "detach": True, "ignore": ignore,
              "pid_file": "grandchild"},
             {"spawn": ["sleep", "1001"], "pid_file": "child"},
             {"ignore": ignore}, {"init": True}, {"say": "spawned"}, {"mark": "silent"},
             {"sleep": 60}]
    run = Run(name, "opencode", steps, "--idle-nudge-timeout", "0", "--idle-timeout",
              str(IDLE_S))
    due = run.mark("silent") + IDLE_S
    record = json.loads(run.wait_file("inv-000.json").read_text())
    pids = [record["pid"], *(int(run.wait_file(f).read_text()) for f in ("child", "grandchild"))]
    while any(pid_alive(pid) for pid in pids):
        time.sleep(0.005)
    dead = time.monotonic()
    run.finish()
    return dead - due


def run(quick: bool) -> list[Result]:
    ROOT.mkdir(parents=True, exist_ok=True)
    results = [
        nudge_lateness(4 if quick else 10),
        tree_dead(stubborn=True, repeat=1 if quick else 3),
        tree_dead(stubborn=False, repeat=2 if quick else 5),
        cpu_while_silent(10 if quick else 60),
    ]
    shutil.rmtree(ROOT, ignore_errors=True)
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    print_results(run(quick=parser.parse_args().quick))
