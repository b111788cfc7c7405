"""Benchmark `aidd --report` over a night of 10,000 attempts, beside the floor of reading its
events at all.

    python bench/report_bench.py [--attempts 10000] [--repeat 5]

The project (made once under `bench/.work/`, reused) is a git repository whose events.jsonl
holds 10,000 attempts as aidd writes them (iteration_start, the NNN and NNN-end checkpoints,
iteration_end with tokens and cost; a rate limit, a gate run or a pacing pause now and then),
about 45,000 lines in one run. The checkpoints are real commits (made with `git fast-import`
in a few seconds): every attempt changes a source file, every tenth sets a feature passing,
so the report's git reads (feature changes between checkpoints, diffstat, commits) do their
real work. Each measure is a fresh process, wall time, round-robin:

- floor: a bare python that reads events.jsonl and `json.loads` every line;
- text, json, html: `python -m aidd --project-dir P --report` (`--json`, `--html FILE`);
- text CPU: user + system CPU of the text report and its git runs, beside the floor's.

Target (issue 16): the report over 10,000 attempts' events in <= 1 s.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import WORK, Result, env_with_repo, print_results, round_robin, timed

LAYOUT_VERSION = "v2"
ATTEMPTS = 10000
TARGET_S = 1.0
FLOOR = """
import json, sys
with open(sys.argv[1], "rb") as f:
    for line in f:
        json.loads(line)
"""


def _feature(n: int, passes: bool, note: str) -> str:
    return json.dumps({"id": f"feature-{n}", "category": "Core", "title": f"Feature {n}",
                       "description": f"feature {n} works", "status": "completed" if passes
                       else "in_progress", "passes": passes, "notes": note}, indent=2)


def _blob(text: str) -> str:
    data = text.encode()
    return f"data {len(data)}\n{text}\n"


def _history(attempts: int, features: int, start: datetime, run: str) -> tuple[str, list[int]]:
    """A fast-import stream of one commit per attempt (its NNN-end checkpoint), and which
    attempts set which feature passing."""
    stream = ["reset refs/heads/main\n"]
    stamp = int(start.timestamp())
    passed = []
    for i in range(1, attempts + 1):
        changes = [f"M 100644 inline src/mod{i % 200}.py\n" + _blob(f"value = {i}\n" * 20)]
        if i == 1:
            changes += [f"M 100644 inline .automaker/features/feature-{n}/feature.json\n"
                        + _blob(_feature(n, False, "planned")) for n in range(features)]
        elif i % 10 == 0 and len(passed) < features:
            n = len(passed)
            passed.append(i)
            changes.append(f"M 100644 inline .automaker/features/feature-{n}/feature.json\n"
                           + _blob(_feature(n, True, f"attempt {i}")))
        when = stamp + i * 30
        stream.append(f"commit refs/heads/main\nmark :{i}\n"
                      f"committer aidd <aidd@localhost> {when} +0000\n"
                      + _blob(f"aidd checkpoint {run} {i:03d}-end") + "".join(changes))
    return "".join(stream), passed


def _events(path: Path, attempts: int, commits: list[str], start: datetime, run: str) -> None:
    rng = random.Random(7)
    lines = []

    def emit(at: datetime, event: str, **fields: object) -> None:
        stamp = at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        lines.append(json.dumps({"v": 1, "ts": stamp, "run": run, "event": event, **fields}))

    emit(start, "run_start", aidd_version="0.1.0", pid=4242, cli="opencode")
    emit(start, "gate_baseline", number=1, commands=[{"name": "pytest", "ok": True}],
         duration_s=3.0)
    for i in range(1, attempts + 1):
        at = start + timedelta(seconds=i * 30)
        result = rng.choice((0,) * 16 + (71, 72, 74, 75))
        outcome = {0: "success", 74: "rate_limited"}.get(result, "failure")
        before = commits[i - 2] if i > 1 else commits[0]
        emit(at, "iteration_start", number=i, index=i, of=None, phase="main", kind="coding",
             reason="onboarding complete", model=None, prompt_bytes=13000,
             log=f".automaker/iterations/{i:03d}.log", prompt_file=f"{i:03d}.prompt.md")
        emit(at, "checkpoint", number=i, label=f"{i:03d}", ref=f"refs/aidd/checkpoints/{run}/"
             f"{i:03d}", commit=before, files=0, duration_s=0.01)
        end = at + timedelta(seconds=25)
        emit(end, "checkpoint", number=i, label=f"{i:03d}-end",
             ref=f"refs/aidd/checkpoints/{run}/{i:03d}-end", commit=commits[i - 1], files=1,
             duration_s=0.02)
        emit(end, "iteration_end", number=i, result=result, outcome=outcome,
             reason={0: "exit_status", 74: "rate_limited", 71: "idle_timeout",
                     72: "provider_error", 75: "no_work"}[result],
             exit_status=0, duration_s=25.0, bytes=4000,
             tokens={"input": 12000, "output": 900, "reasoning": 0, "cache_read": 30000,
                     "cache_write": 0}, cost_usd=round(rng.uniform(0.01, 0.2), 4),
             conversation_id=f"ses_{i}", cost_estimated=i % 4 == 0)
        if result == 74:
            emit(end, "rate_limit_sleep", number=i, until=end.isoformat(), seconds=60.0,
                 source="retry_after", message=None)
        elif result == 0 and i % 5 == 0:
            emit(end, "gate", number=i, name="pytest", ok=True, exit=0, duration_s=3.0,
                 new_failures=0, known_failures=0, new=[], timed_out=False,
                 log=f".automaker/iterations/{i:03d}.gate.log")
    emit(start + timedelta(seconds=attempts * 30 + 40), "run_end", exit_code=0, reason="done",
         iterations=attempts, attempts=attempts, failures=0, rate_limit_sleeps=0, paused_s=0,
         duration_s=attempts * 30 + 40.0, tokens=None, cost_usd=None)
    path.write_text("\n".join(lines) + "\n")


def make_project(attempts: int) -> Path:
    root = WORK / f"report-{attempts}"
    done = root / f".generated-{LAYOUT_VERSION}"
    if done.exists():
        return root
    subprocess.run(["rm", "-rf", str(root)], check=True)
    (root / ".automaker").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    features = attempts // 20
    # The night ends an hour before the project is made: in the past, like a real one.
    start = (datetime.now(UTC) - timedelta(seconds=attempts * 30 + 3600)).replace(microsecond=0)
    run = start.strftime("%Y%m%dT%H%M%SZ") + "-4242"
    stream, _ = _history(attempts, features, start, run)
    marks = root / ".git" / "bench-marks"
    subprocess.run(["git", "fast-import", "--quiet", f"--export-marks={marks}"], cwd=root,
                   input=stream.encode(), check=True)
    by_mark = dict(line.split() for line in marks.read_text().splitlines())
    commits = [by_mark[f":{i}"] for i in range(1, attempts + 1)]
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=root, check=True)
    _events(root / ".automaker" / "events.jsonl", attempts, commits, start, run)
    done.touch()
    return root


def commands(project: Path) -> dict[str, list[str]]:
    py, base = sys.executable, ["-m", "aidd", "--project-dir", str(project), "--report"]
    return {"floor": [py, "-c", FLOOR, str(project / ".automaker" / "events.jsonl")],
            "text": [py, *base], "json": [py, *base, "--json"],
            "html": [py, *base, "--html", str(project.parent / f"{project.name}.html")]}


def cpu_seconds(argv: list[str], env: dict[str, str]) -> float:
    """User and system CPU of one fresh process and everything it waited for (its git runs):
    unlike wall time, it does not grow with the load of a shared machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, capture_output=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(project: Path, repeat: int) -> dict[str, list[float]]:
    env = env_with_repo()
    argvs = commands(project)
    cases = {name: (lambda argv=argv: timed(argv, env=env)) for name, argv in argvs.items()}
    cases["text cpu"] = lambda: cpu_seconds(argvs["text"], env)
    cases["floor cpu"] = lambda: cpu_seconds(argvs["floor"], env)
    return round_robin(cases, repeat)


def results_for(attempts: int, times: dict[str, list[float]], lines: int) -> list[Result]:
    rows = []
    for name, label in (("text", "--report"), ("json", "--report --json"),
                        ("html", "--report --html FILE")):
        target = name == "text"
        rows.append(Result(
            group="report", case=f"`aidd {label}`, {attempts:,} attempts", samples=times[name],
            floor="bare python: json.loads every line of events.jsonl",
            floor_samples=times["floor"], target=f"<= {TARGET_S:g} s" if target else "",
            met=statistics.median(times[name]) <= TARGET_S if target else None,
            note=f"{lines:,} event lines, real checkpoint commits in git" if target else ""))
    rows.append(Result(
        group="report", case=f"`aidd --report`, {attempts:,} attempts: CPU", unit="s CPU",
        samples=times["text cpu"], floor="bare python: json.loads every line of events.jsonl",
        floor_samples=times["floor cpu"],
        note="user + system CPU of aidd and its git runs: steadier than wall time on a shared "
             "machine (with a free core the git reads overlap the tally)"))
    return rows


def run(quick: bool) -> list[Result]:
    """The rows for `bench/run.py`."""
    attempts, repeat = ATTEMPTS, 3 if quick else 7
    project = make_project(attempts)
    lines = sum(1 for _ in (project / ".automaker" / "events.jsonl").open("rb"))
    return results_for(attempts, measure(project, repeat), lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=ATTEMPTS)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    project = make_project(args.attempts)
    lines = sum(1 for _ in (project / ".automaker" / "events.jsonl").open("rb"))
    rows = results_for(args.attempts, measure(project, args.repeat), lines)
    print_results(rows)
    return 0 if all(r.met is not False for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
