"""Benchmark `aidd --check-features` and `aidd --status` against the physical floor (FEA-22/34).

    python bench/features_bench.py [--sizes 10,1000,5000,20000] [--repeat 7] [--strict]

For each size a project with that many features is generated once under `bench/.work/`
(reused by later runs). Each measure is a fresh process, wall time including interpreter
start, run round-robin so machine noise hits every command alike:

- floor:        a bare python that finds and `json.loads` every feature.json;
- check, status: `python -m aidd --project-dir P --check-features` / `--status`;
- check api, status api: the same work through the library functions, without the CLI
  (shows what Click and the rest of the CLI's imports cost).

Targets (issue 33, 5,000 features): check and status within 1.5x the floor measured in the same
run. `--strict` exits 1 when missed.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import WORK, Result, env_with_repo, print_results, round_robin, timed

LAYOUT_VERSION = "v1"
TARGET_RATIO = 1.5
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
from aidd.reports.featurecheck import check_features
from aidd.project.paths import ProjectPaths
text, code = check_features(ProjectPaths(Path(sys.argv[1])))
sys.stdout.write(text)
"""
STATUS_API = """
import sys
from datetime import UTC, datetime
from pathlib import Path
from aidd.project.paths import ProjectPaths
from aidd.reports.status import build_status, render_status_text, write_status
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


def measure(project: Path, repeat: int) -> dict[str, list[float]]:
    env = env_with_repo()
    cases = {
        name: (lambda argv=argv: timed(argv, env=env, ok=(0, 7)))
        for name, argv in commands(project).items()
    }
    return round_robin(cases, repeat)


def results_for(size: int, times: dict[str, list[float]]) -> list[Result]:
    rows = []
    for name, label in (("check", "--check-features"), ("status", "--status")):
        limit = size == TARGET_SIZE
        ratio = statistics.median(times[name]) / statistics.median(times["floor"])
        rows.append(Result(
            group="features",
            case=f"`aidd {label}`, {size} features",
            samples=times[name],
            floor="bare python: walk + json.loads every file",
            floor_samples=times["floor"],
            target=f"<= {TARGET_RATIO}x" if limit else "",
            met=ratio <= TARGET_RATIO if limit else None,
            note=f"same work through the library without the CLI: "
            f"{statistics.median(times[name + ' api']):.3f} s"
            + ("; per feature as fast as the floor: the gap is the fixed start-up (interpreter,"
               " Click, our modules)" if limit and name == "status" else ""),
        ))
    return rows


def run(quick: bool) -> list[Result]:
    """The rows for `bench/run.py`: sizes 10 → 20,000 (quick: 10 → 5,000)."""
    sizes, repeat = ((10, 1000, 5000), 3) if quick else ((10, 1000, 5000, 20000), 7)
    out: list[Result] = []
    for size in sizes:
        out += results_for(size, measure(make_project(size), repeat))
    return out


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,1000,5000,20000")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    results = {}
    rows: list[Result] = []
    for size in (int(s) for s in args.sizes.split(",")):
        results[size] = measure(make_project(size), args.repeat)
        rows += results_for(size, results[size])
        print(f"measured {size} features", file=sys.stderr)
    print_results(rows)
    print("\n".join(["", *growth(results)]))
    return 1 if args.strict and any(r.met is False for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
