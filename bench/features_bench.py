"""Benchmark `aidd --check-features` and `aidd --status` against the physical floor (FEA-22/34).

    python bench/features_bench.py [--sizes 10,1000,5000,20000] [--repeat 7] [--strict]

For each size a project with that many features is generated once under `bench/.work/`
(reused by later runs). Each measure is a fresh process, wall time including interpreter
start, run round-robin so machine noise hits every command alike:

- floor:        a bare python that finds and `json.loads` every feature.json;
- check, status: `python -m aidd --project-dir P --check-features` / `--status`;
- check api, status api: the same work through the library functions, without the CLI
  (shows what Click and the rest of the CLI's imports cost).

Targets (REL, 5,000 features): check <= 0.5 s, status <= 0.15 s. `--strict` exits 1 when missed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "bench" / ".work"
LAYOUT_VERSION = "v1"
TARGETS = {"check": 0.5, "status": 0.15}
TARGET_SIZE = 5000

FLOOR = """
import json, os, sys
n = 0
for d, _, names in os.walk(sys.argv[1]):
    if "feature.json" in names:
        with open(os.path.join(d, "feature.json"), "rb") as f:
            json.loads(f.read())
        n += 1
"""
CHECK_API = """
import sys
from pathlib import Path
from aidd.checkfeatures import check_features
from aidd.project.paths import ProjectPaths
text, code = check_features(ProjectPaths(Path(sys.argv[1])))
sys.stdout.write(text)
"""
STATUS_API = """
import sys
from datetime import UTC, datetime
from pathlib import Path
from aidd.project.paths import ProjectPaths
from aidd.status import build_status, render_status_text, write_status
paths = ProjectPaths(Path(sys.argv[1]))
text = render_status_text(build_status(paths, None, datetime.now(UTC), require_features=True))
write_status(paths, text)
sys.stdout.write(text)
"""

CATEGORIES = ["Core", "UI", "Billing", "Auth", "API", "Search", "Infra", "Docs", "Mobile"]
STATUSES = ["backlog", "in_progress", "completed", "waiting_approval", "backlog", "completed"]


def feature(i: int, rng: random.Random) -> tuple[str, dict[str, object]]:
    """A realistic AutoMaker feature (about 700 bytes); about 2 % are audit findings."""
    finding = i % 50 == 49
    fid = f"audit-security-{1736000000 + i}-check-{i}" if finding else f"feature-{i}-item-{i}"
    status = rng.choice(STATUSES)
    data: dict[str, object] = {
        "id": fid,
        "category": rng.choice(CATEGORIES),
        "title": f"Feature number {i}" if i % 3 else None,
        "description": f"As a user I can do thing {i}. " * rng.randint(3, 8),
        "status": status,
        "passes": status == "completed",
        "priority": rng.randint(1, 4),
        "dependencies": [f"feature-{j}-item-{j}" for j in range(max(0, i - 2), i) if j % 50 != 49],
        "steps": [f"step {k} of feature {i}" for k in range(rng.randint(2, 5))],
        "imagePaths": [],
        "createdAt": "2026-01-01T00:00:00.000Z",
        "updatedAt": "2026-01-02T00:00:00.000Z",
    }
    if finding:
        data["auditSource"] = "SECURITY"
        data["auditSeverity"] = "medium"
    return fid, data


def make_project(size: int) -> Path:
    root = WORK / f"features-{size}"
    done = root / f".generated-{LAYOUT_VERSION}"
    if done.exists():
        return root
    features = root / ".automaker" / "features"
    features.mkdir(parents=True, exist_ok=True)
    rng = random.Random(size)
    for i in range(size):
        fid, data = feature(i, rng)
        folder = features / fid
        folder.mkdir(exist_ok=True)
        (folder / "feature.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    todo = "".join(f"- [{'x' if k % 3 else ' '}] task {k}\n" for k in range(30))
    (root / ".automaker" / "todo.md").write_text("# TODO List\n\n" + todo, encoding="utf-8")
    done.touch()
    return root


def commands(project: Path) -> dict[str, list[str]]:
    py, features = sys.executable, str(project / ".automaker" / "features")
    return {
        "floor": [py, "-c", FLOOR, features],
        "check": [py, "-m", "aidd", "--project-dir", str(project), "--check-features"],
        "status": [py, "-m", "aidd", "--project-dir", str(project), "--status"],
        "check api": [py, "-c", CHECK_API, str(project)],
        "status api": [py, "-c", STATUS_API, str(project)],
    }


def run_once(argv: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 7):
        sys.exit(f"{argv[2:]} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed


def measure(project: Path, repeat: int) -> dict[str, list[float]]:
    cmds = commands(project)
    for argv in cmds.values():
        run_once(argv)  # warm the page cache and __pycache__
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(repeat):
        for name, argv in cmds.items():
            times[name].append(run_once(argv))
    return times


def fmt(samples: list[float]) -> str:
    return f"{statistics.median(samples):7.3f} ({min(samples):.3f}-{max(samples):.3f})"


def report(results: dict[int, dict[str, list[float]]]) -> list[str]:
    names = list(next(iter(results.values())))
    head = f"{'features':>8} | " + " | ".join(f"{n:^23}" for n in names)
    lines = [head + " | check/floor status/floor", "-" * (len(head) + 26)]
    for size, times in results.items():
        med = {n: statistics.median(t) for n, t in times.items()}
        cells = " | ".join(f"{fmt(times[n]):>23}" for n in names)
        ratios = f"{med['check'] / med['floor']:11.2f} {med['status'] / med['floor']:12.2f}"
        lines.append(f"{size:>8} | {cells} | {ratios}")
    lines.append("median (min-max) seconds of wall time per fresh process")
    return lines


def growth(results: dict[int, dict[str, list[float]]]) -> list[str]:
    sizes = sorted(results)
    if len(sizes) < 2:
        return []
    small, big = sizes[0], sizes[-1]
    lines = [f"cost per 1,000 features between {small} and {big} (linear growth: flat):"]
    for name in results[small]:
        per = [
            (statistics.median(results[s][name]) - statistics.median(results[small][name]))
            / (s - small)
            * 1000
            for s in sizes[1:]
        ]
        lines.append(f"  {name:<11}" + "  ".join(f"{p * 1000:6.1f} ms" for p in per))
    return lines


def verdict(results: dict[int, dict[str, list[float]]]) -> tuple[list[str], bool]:
    times = results.get(TARGET_SIZE)
    if times is None:
        return [], True
    ok, lines = True, []
    for name, limit in TARGETS.items():
        med = statistics.median(times[name])
        hit = med <= limit
        ok &= hit
        lines.append(
            f"target {name} @ {TARGET_SIZE}: {med:.3f} s <= {limit} s: {'ok' if hit else 'MISSED'}"
        )
    return lines, ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,1000,5000,20000")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    results = {}
    for size in (int(s) for s in args.sizes.split(",")):
        project = make_project(size)
        results[size] = measure(project, args.repeat)
        print(f"measured {size} features", file=sys.stderr)
    lines, ok = verdict(results)
    print("\n".join([*report(results), "", *growth(results), "", *lines]))
    return 0 if ok or not args.strict else 1


if __name__ == "__main__":
    raise SystemExit(main())
