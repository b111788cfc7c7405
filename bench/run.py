"""Run every benchmark side by side and write `docs/benchmarks.md` (issue 9).

    python bench/run.py [--quick] [--only NAME ...] [--out docs/benchmarks.md]

Each `bench/<name>_bench.py` module exposes `run(quick: bool) -> list[Result]` (bench/common.py).
A module that is missing or fails to import is reported and skipped; the others still run.
The report holds the machine, the date, one table per group with its notes, and a summary of
every target met or missed, with by how much.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import re
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import ModuleType

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import REPO, Result, table

BENCH_DIR = Path(__file__).resolve().parent
SUFFIX = "_bench.py"
Runner = Callable[[bool], list[Result]]


@dataclass
class Outcome:
    """What one module gave: its results, or why it gave none."""

    name: str
    results: list[Result]
    seconds: float
    error: str = ""


def discover(directory: Path = BENCH_DIR) -> dict[str, Path]:
    """`<name>_bench.py` files by name, sorted."""
    return {p.name[: -len(SUFFIX)]: p for p in sorted(directory.glob(f"*{SUFFIX}"))}


def load(name: str, path: Path) -> Runner:
    """Import one module by path and return its `run`; raises when it has none."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module: ModuleType = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    runner = getattr(module, "run", None)
    if not callable(runner):
        raise AttributeError(f"{path.name} has no run(quick) function")
    return runner  # type: ignore[no-any-return]


def run_all(modules: dict[str, Path], *, quick: bool, only: Sequence[str] = (),
            log: Callable[[str], None] = print) -> list[Outcome]:
    """Run each selected module in turn; one failing module never stops the others."""
    outcomes = []
    for name in only or list(modules):
        if name not in modules:
            outcomes.append(Outcome(name, [], 0.0, f"no bench/{name}{SUFFIX}"))
            log(f"bench: {name}: missing, skipped")
            continue
        log(f"bench: {name} ...")
        start = time.perf_counter()
        try:
            results = list(load(name, modules[name])(quick))
            error = ""
        except (Exception, SystemExit) as exc:  # a benchmark's own failure is reported
            results = []
            error = "".join(traceback.format_exception_only(exc)).strip()
        outcomes.append(Outcome(name, results, time.perf_counter() - start, error))
        log(f"bench: {name}: {len(results)} results in {outcomes[-1].seconds:.1f} s"
            + (f"; FAILED: {error}" if error else ""))
    return outcomes


# -- the report --------------------------------------------------------------------------------
def machine() -> list[str]:
    return [
        f"- CPU: {_cpu_model()}, {os.cpu_count()} logical cores",
        f"- RAM: {_ram()}",
        f"- OS: {platform.system()} {platform.release()} ({platform.machine()})",
        f"- Python: {platform.python_version()} ({platform.python_implementation()})",
    ]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _ram() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return "unknown"


def _load() -> str:
    try:
        return ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


_TARGET = re.compile(r"^(?:<=|≤|within \+-)\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|%|MB|x)?\s*$")


def margin(result: Result) -> str:
    """How far the median is from a target of the form `<= N unit`, `<= Nx` or `within +-N s`
    (a target in ms is compared with a median in s); "" for any other target."""
    match = _TARGET.match(result.target.strip())
    if match is None:
        return ""
    limit, unit = float(match.group(1)), match.group(2) or ""
    if unit == "ms" and result.unit.startswith("s"):
        limit /= 1000
    value = result.ratio if unit == "x" else result.median
    if not limit or value is None:
        return ""
    return f"{value:.4g} vs {limit:g} ({(value - limit) / limit * 100:+.0f} %)"


def summary(outcomes: Sequence[Outcome]) -> list[str]:
    lines = []
    for outcome in outcomes:
        if outcome.error:
            lines.append(f"- **{outcome.name}**: not measured ({outcome.error})")
        for r in outcome.results:
            if r.met is None:
                continue
            verdict = "met" if r.met else "**missed**"
            detail = margin(r)
            lines.append(f"- {r.group} / {r.case}: target {r.target}: {verdict}"
                         + (f", {detail}" if detail else ""))
    return lines or ["- no targets were measured"]


def render(outcomes: Sequence[Outcome], *, quick: bool, now: datetime,
           load: str = "") -> str:
    """`load`: the machine's load average during the runs (a shared machine inflates times)."""
    lines = ["# Benchmarks", "",
             "Written by `python bench/run.py`" + (" --quick (fewer repeats: indicative only)"
                                                    if quick else "") + ".", "",
             f"Date: {now.isoformat(timespec='seconds')}", "", "## Machine", "", *machine(),
             *([f"- Load average (1, 5, 15 min): {load}"] if load else []), ""]
    groups: dict[str, list[Result]] = {}
    for outcome in outcomes:
        for r in outcome.results:
            groups.setdefault(r.group, []).append(r)
    for group, results in groups.items():
        lines += [f"## {group}", "", *table(results), ""]
        notes = [f"- {r.case}: {r.note}" for r in results if r.note]
        if notes:
            lines += ["Notes:", "", *notes, ""]
    lines += ["## Targets", "", *summary(outcomes), ""]
    took = ", ".join(f"{o.name} {o.seconds:.0f} s" for o in outcomes)
    lines += [f"Time taken: {took}.", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, directory: Path = BENCH_DIR) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, smaller sizes")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="run only this module (repeatable), e.g. --only features")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    args = parser.parse_args(argv)
    before = _load()
    outcomes = run_all(discover(directory), quick=args.quick, only=args.only)
    load = f"{before} at the start, {_load()} at the end"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(outcomes, quick=args.quick, now=datetime.now().astimezone(),
                               load=load))
    print(f"bench: wrote {args.out}")
    return 1 if any(o.error for o in outcomes) else 0  # a missed target is a finding, not an error


if __name__ == "__main__":
    raise SystemExit(main())
