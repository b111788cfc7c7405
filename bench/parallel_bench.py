"""Benchmark `--parallel N` (issue 29): the wall-clock of 6 independent features at N = 1, 2, 3,
and aidd's own overhead per attempt with slots beside N = 1.

    python bench/parallel_bench.py [--quick]

A git project with 6 backlog features (`.automaker/` tracked). The fake `opencode` (bash) takes
a fixed time (`sleep`) for a feature: in a slot's worktree it finishes the feature its branch
`aidd/<id>` names, in the project (N = 1) the first one not yet verified; it writes a file of
its own and the feature file (`verified`, `passes`), prints an opencode turn with the write as
a tool call, and exits. The completion review (all verified) costs no sleep. The run ends at
exit 73. Checkpoints on, no gate: a plain run.

- Wall-clock at N: the whole run (start-up, 6 attempts, merges, the review). Speed-up =
  wall(N = 1) / wall(N), measured in the same rounds; target >= 0.8 N. The floor: the agent's
  critical path, 6 / N attempts of the fixed time.
- Overhead per attempt: (`iteration_end`.ts - `iteration_start`.ts) - the agent's own time
  (it writes its start and end, `$EPOCHREALTIME`, to a file outside the project): launch,
  output reading, logs, events, the checkpoints of the attempt. Worktree creation, its sync,
  the merge and the gate happen outside that window (before `slot_start`, after
  `iteration_end`): excluded, as the issue asks. Events carry milliseconds.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
from datetime import datetime
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import WORK, Result, env_with_repo, print_results, round_robin, timed
from bench.overhead_bench import shim_dir

BASE = WORK / "parallel"
FEATURES = 6
AGENT_S = 8.0  # the fixed time of one feature's attempt (--quick: 2 s)
SLOTS = (1, 2, 3)
SHIM = r"""#!/bin/bash
case "$1" in --version) echo 1.18.33; exit 0;; esac
start=$EPOCHREALTIME
while IFS= read -r _line; do :; done
branch=$(git rev-parse --abbrev-ref HEAD)
own=""
case "$branch" in
  aidd/*) own="${branch#aidd/}";;
  *) for f in .automaker/features/*/feature.json; do
       read -r line < "$f"
       case "$line" in *verified*) ;; *) own=$(basename "$(dirname "$f")"); break;; esac
     done;;
esac
if [ -n "$own" ]; then
  sleep "$BENCH_AGENT_S"
  echo "$own" > "$own.txt"
  printf '{"id":"%s","category":"c","description":"%s","status":"verified","passes":true}\n' \
    "$own" "$own" > ".automaker/features/$own/feature.json"
fi
t='"timestamp":1,"sessionID":"ses_bench"'
p='"sessionID":"ses_bench","messageID":"msg_bench"'
w='"tool":"write","state":{"status":"completed","input":{"filePath":"x.txt"},"output":"ok"}'
printf '%s\n' \
  "{\"type\":\"step_start\",$t,\"part\":{$p,\"type\":\"step-start\"}}" \
  "{\"type\":\"tool_use\",$t,\"part\":{$p,\"type\":\"tool\",$w}}" \
  "{\"type\":\"text\",$t,\"part\":{$p,\"type\":\"text\",\"text\":\"done\"}}" \
  "{\"type\":\"step_finish\",$t,\"part\":{$p,\"type\":\"step-finish\",\"reason\":\"stop\",\"cost\":0,\"tokens\":{\"input\":1,\"output\":1,\"reasoning\":0,\"cache\":{\"read\":0,\"write\":0}}}}"
echo "$start $EPOCHREALTIME" >> "$BENCH_TIMES"
exit 0
"""


def _env(slots: int, agent_s: float) -> dict[str, str]:
    home = BASE / "home"
    folder = shim_dir(BASE, SHIM)
    return env_with_repo({
        "PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
        "AIDD_HOME": str(home / "aidd"), "GIT_CEILING_DIRECTORIES": str(BASE),
        "BENCH_AGENT_S": str(agent_s), "BENCH_TIMES": str(BASE / f"times-{slots}"),
        "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b",
    })


def _project(slots: int, env: dict[str, str]) -> Path:
    root = BASE / f"project-{slots}"
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(BASE / f"trees-{slots}", ignore_errors=True)
    (BASE / f"times-{slots}").unlink(missing_ok=True)
    meta = root / ".automaker"
    meta.mkdir(parents=True)
    (meta / "app_spec.txt").write_text("spec\n")
    (meta / "CHANGELOG.md").write_text("# Changelog\n")
    for n in range(1, FEATURES + 1):
        feature = meta / "features" / f"f{n}" / "feature.json"
        feature.parent.mkdir(parents=True)
        feature.write_text(json.dumps({"id": f"f{n}", "category": "c", "description": f"f{n}",
                                       "status": "backlog", "passes": False}) + "\n")
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "first"]):
        subprocess.run(["git", *argv], cwd=root, env=env, check=True, capture_output=True)
    return root


def run_once(slots: int, agent_s: float) -> tuple[float, list[float]]:
    """The run's wall seconds, and aidd's own seconds in each feature's attempt."""
    env = _env(slots, agent_s)
    root = _project(slots, env)
    argv = [sys.executable, "-m", "aidd", "--project-dir", str(root), "--cli", "opencode",
            "--parallel", str(slots), "--worktree-dir", str(BASE / f"trees-{slots}"),
            "--max-iterations", str(FEATURES * 2)]
    wall = timed(argv, env=env, cwd=BASE, ok=(73,))
    return wall, _overheads(root, Path(env["BENCH_TIMES"]))


def _overheads(root: Path, times: Path) -> list[float]:
    lines = (root / ".automaker" / "events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    at = {(e["event"], e["number"]): datetime.fromisoformat(e["ts"].replace("Z", "+00:00"))
          for e in events if e["event"] in ("iteration_start", "iteration_end")}
    windows = sorted((at[("iteration_end", n)] - at[("iteration_start", n)]).total_seconds()
                     for kind, n in at if kind == "iteration_start")
    spans = sorted(float(b) - float(a) for a, b in
                   (line.split() for line in times.read_text().splitlines()))
    # Both sorted: the sleeping attempts are the longest windows and the longest spans alike.
    return [w - s for w, s in zip(windows[-FEATURES:], spans[-FEATURES:], strict=True)]


def run(quick: bool) -> list[Result]:
    BASE.mkdir(parents=True, exist_ok=True)
    agent_s = 2.0 if quick else AGENT_S
    overheads: dict[int, list[float]] = {n: [] for n in SLOTS}

    def case(n: int) -> float:
        wall, spent = run_once(n, agent_s)
        overheads[n] += spent
        return wall

    before = os.getloadavg()[0]
    walls = round_robin({str(n): (lambda n=n: case(n)) for n in SLOTS}, 1 if quick else 3)
    load = f"load average {before:.2f} before, {os.getloadavg()[0]:.2f} after (2 shared cores)"
    rows = []
    for n in SLOTS:
        speedup = statistics.median(walls["1"]) / statistics.median(walls[str(n)])
        rows.append(Result(
            group="parallel", case=f"{FEATURES} features of {agent_s:g} s each, --parallel {n}",
            samples=walls[str(n)], floor=f"the agents' critical path, {FEATURES // n} x "
            f"{agent_s:g} s", floor_samples=[FEATURES // n * agent_s],
            target=f"speed-up >= {0.8 * n:.1f}" if n > 1 else "",
            met=speedup >= 0.8 * n if n > 1 else None,
            note=f"speed-up over N = 1: {speedup:.2f}; {load}"))
    base = statistics.median(overheads[1])
    for n in SLOTS:
        median = statistics.median(overheads[n])
        rows.append(Result(
            group="parallel", case=f"aidd's own time per attempt, --parallel {n}",
            samples=[v * 1000 for v in overheads[n]], unit="ms",
            floor="N = 1" if n > 1 else "", floor_samples=[v * 1000 for v in overheads[1]]
            if n > 1 else [],
            note=f"{median * 1000 - base * 1000:+.0f} ms beside N = 1; worktree, sync, merge "
                 "and gate excluded"))
    return rows


if __name__ == "__main__":
    print_results(run(quick="--quick" in sys.argv))
