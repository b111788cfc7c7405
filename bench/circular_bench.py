"""Scripted bad nights (issue 32): how many attempts are wasted, i.e. end like an earlier one on
the same feature, by an agent that repeats a broken fix, one that exhausts its context on one
feature, one that breaks a test every time, and a machine that dies mid-attempt (kill -9 of
aidd and the agent, then a restart). The agent is bench/circular_agent.py over the fake CLI.

    python bench/circular_bench.py [--base CHECKOUT] [--quick]

`--base` (or AIDD_BENCH_BASE for bench/run.py) runs each night with that checkout's aidd too
(the "before"); the rows of this checkout carry the targets: no feature gets more than
N = --max-attempts-per-feature attempts ending the same way, and every workable feature is
reached.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import REPO, Result, print_results

GROUP = "Circular fixes: wasted attempts on scripted bad nights (issue 32)"
AGENT = Path(__file__).resolve().parent / "circular_agent.py"
LIMIT = 3  # --max-attempts-per-feature, the default
LIMITS = ("--idle-nudge-timeout", "60", "--idle-timeout", "120", "--timeout", "300")
# The restart's first prompt names the killed attempt and its feature (every restart night's
# killed attempt is on a-cart)
KILLED_ON_A_CART = re.compile(r"was killed during attempt \d+ \(\S+\) on feature a-cart")
GATE = "test -z \"$(ls src/*.broken 2>/dev/null)\""  # red once a test is broken
# name -> (the agent's behaviour per feature, the gate, the attempt at a feature during which
# aidd and the agent are killed -9 before a restart)
NIGHTS: dict[str, tuple[dict[str, str], bool, dict[str, int]]] = {
    "repeats a broken fix": ({"a-cart": "broken", "b-login": "ok", "c-search": "ok"}, False,
                             {}),
    "exhausts its context on one feature": ({"a-cart": "context", "b-login": "ok"}, False, {}),
    "breaks a test every time": ({"a-cart": "breaks_test", "b-login": "ok"}, True, {}),
    "machine died mid-attempt, restart": ({"a-cart": "ok", "b-login": "ok"}, False,
                                          {"a-cart": 0}),
    "machine died during a repeated broken fix, restart": (
        {"a-cart": "broken", "b-login": "ok"}, False, {"a-cart": 2}),
}


@dataclass(frozen=True)
class Night:
    attempts: int
    wasted: int  # attempts that ended like an earlier one on the same feature
    most_alike: int  # the most attempts on one feature that ended the same way
    reached: tuple[str, ...]  # the features the agent worked on
    set_aside: int
    ends: tuple[str, ...]  # run_end reasons
    restart_told: bool | None  # the restart's first prompt named the killed attempt


def run(quick: bool) -> list[Result]:
    base = os.environ.get("AIDD_BENCH_BASE")
    return measure(quick, Path(base) if base else None)


def measure(quick: bool, base: Path | None) -> list[Result]:
    iterations = 8 if quick else 10
    results = []
    for name, (features, gate, sleep_at) in NIGHTS.items():
        for label, checkout in (("before", base), ("after", REPO)):
            if checkout is None:
                continue
            night = play(checkout, features, gate, sleep_at, iterations,
                         with_limit=checkout == REPO)
            met = None
            if checkout == REPO:
                met = night.most_alike <= LIMIT and set(features) <= set(night.reached)
            results.append(Result(
                GROUP, f"{name} ({label}: {_commit(checkout)})", [float(night.wasted)],
                unit="attempts", target=f"<= {LIMIT} alike a feature; all reached" if met
                is not None else "", met=met, note=_note(night, features)))
    return results


def play(checkout: Path, features: dict[str, str], gate: bool, sleep_at: dict[str, int],
         iterations: int, with_limit: bool) -> Night:
    with tempfile.TemporaryDirectory(prefix="aidd-circular-") as tmp:
        where = Path(tmp)
        root = _project(where, features)
        env = _env(where, checkout)
        args = [sys.executable, "-m", "aidd", "--project-dir", str(root), "--cli", "opencode",
                "--max-iterations", str(iterations), *LIMITS]
        args += ["--gate", GATE] if gate else []
        args += ["--max-attempts-per-feature", str(LIMIT)] if with_limit else []
        logs = []
        if sleep_at:
            logs.append(_killed_run(where, args, env, _plan(where, features, 0, sleep_at)))
        logs.append(_plan(where, features, len(logs)))
        env["CIRCULAR_PLAN"] = str(logs[-1])
        done = subprocess.run(args, env=env, cwd=where, capture_output=True, timeout=600,
                              check=False)
        if not (root / ".automaker" / "events.jsonl").exists():
            raise RuntimeError(f"aidd of {checkout} ran no attempt (exit {done.returncode}): "
                               f"{done.stderr.decode(errors='replace')[-500:]}")
        return _judge(root, [json.loads(p.read_text())["log"] for p in logs], bool(sleep_at))


def _killed_run(where: Path, args: list[str], env: dict[str, str], plan: Path) -> Path:
    """The first run, killed with its agent (SIGKILL to both) in the attempt that sleeps."""
    proc = subprocess.Popen(args, env={**env, "CIRCULAR_PLAN": str(plan)}, cwd=where,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    log = Path(json.loads(plan.read_text())["log"])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (log.exists() and '"sleeps": true' in
                                               log.read_text()):
        time.sleep(0.2)
    time.sleep(2)  # the agent writes its half-finished file
    pid = json.loads(log.read_text().splitlines()[-1])["pid"]
    for target in (proc.pid, pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(target, signal.SIGKILL)
    proc.wait(timeout=30)
    return plan


def _project(where: Path, features: dict[str, str]) -> Path:
    root = where / "proj"
    automaker = root / ".automaker"
    for name in features:
        folder = automaker / "features" / name
        folder.mkdir(parents=True)
        (folder / "feature.json").write_text(json.dumps(
            {"id": name, "category": "Core", "description": name, "status": "backlog",
             "passes": False}))
    (automaker / "app_spec.txt").write_text("spec\n")
    (automaker / "CHANGELOG.md").write_text("# Changelog\n")
    (root / "README.md").write_text("a shop\n")
    (root / "src").mkdir()
    return root


def _plan(where: Path, features: dict[str, str], run_index: int,
          sleep_at: dict[str, int] | None = None) -> Path:
    state = where / "agent-state"
    state.mkdir(exist_ok=True)
    plan = where / f"plan-{run_index}.json"
    plan.write_text(json.dumps({"features": features, "sleep_at": sleep_at or {},
                                "state": str(state),
                                "log": str(where / f"agent-{run_index}.jsonl")}))
    return plan


def _env(where: Path, checkout: Path) -> dict[str, str]:
    bin_dir = where / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "opencode"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{AGENT}" opencode "$@"\n')
    wrapper.chmod(0o755)
    home = where / "home"
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"), "AIDD_HOME": str(where / "aidd-home"),
            "PYTHONPATH": str(checkout), "IS_SANDBOX": "1", "LANG": "C.UTF-8",
            "GIT_CEILING_DIRECTORIES": str(where)}


def _judge(root: Path, logs: list[str], restart: bool) -> Night:
    events = [json.loads(line) for line in
              (root / ".automaker" / "events.jsonl").read_text().splitlines() if line.strip()]
    runs = list(dict.fromkeys(e["run"] for e in events if e["event"] == "run_start"))
    alike: Counter[tuple[Any, ...]] = Counter()
    reached: list[str] = []
    attempts = 0
    for run_id, log in zip(runs, logs, strict=False):
        mine = [e for e in events if e["run"] == run_id]
        picked = [json.loads(line) for line in Path(log).read_text().splitlines()] \
            if Path(log).exists() else []
        gates = {e["number"]: tuple(e.get("new") or ()) for e in mine if e["event"] == "gate"}
        ends = [e for e in mine if e["event"] == "iteration_end"]
        for end, agent in zip(ends, picked, strict=False):  # attempt k ran invocation k
            attempts += 1
            feature = agent["feature"]
            reached += [feature] if feature and feature not in reached else []
            alike[(feature, end["result"], end["reason"], gates.get(end["number"], ()))] += 1
    told = None
    if restart and len(runs) > 1:
        second = [e for e in events if e["run"] == runs[1] and e["event"] == "iteration_start"]
        prompt = root / second[0]["prompt_file"] if second else None
        told = prompt is not None and KILLED_ON_A_CART.search(prompt.read_text()) is not None
    return Night(attempts, sum(n - 1 for n in alike.values()), max(alike.values(), default=0),
                 tuple(reached), sum(1 for e in events if e["event"] == "feature_set_aside"),
                 tuple(str(e["reason"]) for e in events if e["event"] == "run_end"), told)


def _note(night: Night, features: dict[str, str]) -> str:
    note = (f"{night.attempts} attempts, at most {night.most_alike} alike on one feature; "
            f"reached {len(set(night.reached) & set(features))} of {len(features)}; "
            f"{night.set_aside} set aside; ended {', '.join(night.ends) or 'never'}")
    if night.restart_told is not None:
        note += (f"; restart's first prompt names the killed attempt and its feature: "
                 f"{night.restart_told}")
    return note


def _commit(checkout: Path) -> str:
    done = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() or checkout.name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="a checkout of aidd before issue 32")
    parser.add_argument("--quick", action="store_true")
    options = parser.parse_args()
    print_results(measure(options.quick, options.base))


if __name__ == "__main__":
    main()
