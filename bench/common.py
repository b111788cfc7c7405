"""What every benchmark module shares: a result row, a timer and round-robin sampling.

A benchmark module under `bench/` exposes `run(quick: bool) -> list[Result]`; `bench/run.py`
calls each one and writes `docs/benchmarks.md`. Modules import this one as
`from bench.common import ...`; to run on its own, a module first puts the repo root on
`sys.path` when `__package__` is empty (see `features_bench.py`). Each result is measured side
by side with its floor (the same work without aidd) in the same run, so the ratio survives a
noisy machine.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "bench" / ".work"
FAKE_BIN = REPO / "tests" / "fakes" / "bin"


@dataclass
class Result:
    """One measured case. `samples` and `floor_samples` are in `unit` (seconds unless said)."""

    group: str
    case: str
    samples: list[float]
    unit: str = "s"
    floor: str = ""
    floor_samples: list[float] = field(default_factory=list)
    target: str = ""
    met: bool | None = None
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def ratio(self) -> float | None:
        if not self.floor_samples:
            return None
        floor = statistics.median(self.floor_samples)
        return self.median / floor if floor else None


def env_with_repo(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child that imports `aidd` from this checkout, with its byte code
    cached as an installed package's is: a PYTHONDONTWRITEBYTECODE inherited from a sandbox
    made every aidd process compile its ~60 modules from source (about 0.1 s each start)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(REPO)
    env.update(extra or {})
    return env


def timed(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    ok: Sequence[int] = (0,),
) -> float:
    """Wall seconds of one fresh process; exits the benchmark when it fails."""
    start = time.perf_counter()
    done = subprocess.run(
        list(argv), cwd=cwd or REPO, env=dict(env or env_with_repo()), capture_output=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in ok:
        tail = done.stderr.decode(errors="replace")[-500:]
        sys.exit(f"bench: {list(argv)[:4]} exited {done.returncode}: {tail}")
    return elapsed


def round_robin(cases: Mapping[str, Callable[[], float]], repeat: int) -> dict[str, list[float]]:
    """Run every case once to warm up, then `repeat` rounds in turn, so noise hits all alike."""
    for run in cases.values():
        run()
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeat):
        for name, run in cases.items():
            samples[name].append(run())
    return samples


def table(results: Sequence[Result]) -> list[str]:
    """Markdown rows: case, median (min-max), floor, ratio, target, verdict."""
    lines = [
        "| case | median (min-max) | floor | floor median | ratio | target | met |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        spread = f"{r.median:.4g} {r.unit} ({min(r.samples):.4g}-{max(r.samples):.4g})"
        floor = f"{statistics.median(r.floor_samples):.4g} {r.unit}" if r.floor_samples else ""
        ratio = f"{r.ratio:.2f}x" if r.ratio is not None else ""
        met = {None: "", True: "yes", False: "**no**"}[r.met]
        lines.append(
            f"| {r.case} | {spread} | {r.floor} | {floor} | {ratio} | {r.target} | {met} |"
        )
    return lines


def print_results(results: Sequence[Result]) -> None:
    """For a module run on its own: `python bench/x_bench.py`."""
    print("\n".join(table(results)))
    for r in results:
        if r.note:
            print(f"- {r.case}: {r.note}")
