"""Run the fault suite with its heavy counts and write `docs/reliability.md` (issue 13).

    python bench/reliability.py [--light] [--out docs/reliability.md]

Every aidd run a reliability test ends is tallied by tests/reliability/harness.py: its exit code,
whether it crashed (an internal error or a crash file), how many processes of its agent were
still running after it exited, and whether anything beside the project changed. The report sums
them per test file, with pytest's own verdict and the wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run_suite(heavy: bool, tally: Path) -> tuple[int, str, float]:
    # One test at a time (-n 0), as the counts in docs/reliability.md were measured.
    argv = [sys.executable, "-m", "pytest", "tests/reliability", "-q", "-p", "no:cacheprovider",
            "-n", "0", *(["--heavy"] if heavy else [])]
    env = {**os.environ, "AIDD_RELIABILITY_TALLY": str(tally)}
    start = time.monotonic()
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    summary = [ln for ln in done.stdout.splitlines() if " passed" in ln or " failed" in ln]
    return done.returncode, (summary[-1] if summary else done.stdout[-500:]), \
        time.monotonic() - start


def summarize(tally: Path) -> list[tuple[str, dict[str, int]]]:
    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    lines = tally.read_text().splitlines() if tally.exists() else []
    for line in lines:
        fact = json.loads(line)
        for key in (fact["test"].split("::")[0], "all"):
            row = rows[key]
            row["runs"] += 1
            row["crashes"] += bool(fact["crash"])
            row["left"] += fact["left"] or 0
            row["outside"] += bool(fact["outside_changed"])
    return sorted(rows.items(), key=lambda item: (item[0] == "all", item[0]))


def report(heavy: bool, code: int, verdict: str, wall_s: float,
           rows: list[tuple[str, dict[str, int]]]) -> str:
    out = [
        "# Reliability",
        "",
        "Written by `python bench/reliability.py`: the fault suite (`tests/reliability/`) with "
        f"its {'heavy' if heavy else 'light'} counts, every aidd run it ends tallied.",
        "",
        f"Date: {datetime.now().astimezone().isoformat(timespec='seconds')}; machine: "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"wall time {wall_s / 60:.1f} min.",
        "",
        f"pytest: `{verdict}` (exit {code}).",
        "",
        "| tests | aidd runs ended | internal errors | agent processes left after aidd exited "
        "| runs that changed files outside the project |",
        "|---|---|---|---|---|",
    ]
    for name, row in rows:
        label = "**all**" if name == "all" else f"`{name}`"
        out.append(f"| {label} | {row['runs']} | {row['crashes']} | {row['left']} "
                   f"| {row['outside']} |")
    out += [
        "",
        "Internal errors are expected only in `test_disk.py`: a full disk is one (REL-21), "
        "reported in one line. "
        "A run killed with SIGKILL on purpose (`test_kill9.py`) is not an ending: its orphans are "
        "counted after the next run, which must reap them. Runs with `--keep-children` are not "
        "counted for processes left (keeping them is what the flag asks).",
        "",
    ]
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--light", action="store_true", help="the CI counts (minutes less)")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "reliability.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tally = Path(tmp) / "tally.jsonl"
        code, verdict, wall_s = run_suite(not args.light, tally)
        rows = summarize(tally)
    args.out.write_text(report(not args.light, code, verdict, wall_s, rows), encoding="utf-8")
    print(f"{verdict}; report in {args.out}")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
