"""Run every benchmark side by side and write `docs/benchmarks.md` (issue 9).

    python bench/run.py [--quick] [--only NAME ...] [--out docs/benchmarks.md]

`--only` re-measures some modules and keeps the rest of an existing report (`merge`); the
sections after `## Targets` are written by hand and kept by every run.

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


# -- keeping what is already written -------------------------------------------------------------
Section = tuple[str, list[str]]  # a `## ` title and its lines


def split(text: str) -> tuple[list[str], list[Section]]:
    """The lines before the first `## ` heading, and each `## ` section."""
    head: list[str] = []
    sections: list[Section] = []
    for line in text.splitlines():
        if line.startswith("## "):
            sections.append((line[3:].strip(), []))
        elif sections:
            sections[-1][1].append(line)
        else:
            head.append(line)
    return head, sections


def _join(head: list[str], sections: Sequence[Section]) -> str:
    lines = list(head)
    for title, body in sections:
        lines += [f"## {title}", *body]
    return "\n".join(lines).rstrip("\n") + "\n"


def merge(old: str, new: str, rerun_modules: Sequence[str], *, only: bool) -> str:
    """The report to write over `old`. The sections after `## Targets` are written by hand
    (e.g. a scenario suite's prose): always kept. With `--only`, the groups not re-run, the
    prose before `## Machine` and their target lines are kept too; the re-run groups replace
    theirs in place, and one line before `## Machine` says what was re-measured when."""
    old_head, old_secs = split(old)
    new_head, new_secs = split(new)
    titles = [title for title, _ in old_secs]
    cut = titles.index("Targets") + 1 if "Targets" in titles else len(old_secs)
    kept_tail = old_secs[cut:]
    if not only or not old_secs:
        return _join(new_head, [*new_secs, *kept_tail])
    fresh = {title: body for title, body in new_secs if title not in ("Machine", "Targets")}
    machine_now = dict(new_secs).get("Machine", [])
    load = next((line.split(": ", 1)[-1] for line in machine_now
                 if line.startswith("- Load average")), "")
    date = next((line for line in new_head if line.startswith("Date: ")), "Date: ?")[6:]
    note = (f"Re-measured on {date} by `bench/run.py --only {' --only '.join(rerun_modules)}`"
            f": {', '.join(fresh) or 'nothing'}" + (f"; load average {load}." if load else "."))
    groups: list[Section] = []
    for title, body in old_secs[:cut]:
        if title == "Targets":
            continue
        new_body = fresh.pop(title, None)  # its table; the prose before the old one is kept
        groups.append((title, body if new_body is None else
                       body[:_table_at(body)] + new_body[_table_at(new_body):]))
    groups += list(fresh.items())
    targets = _merged_targets(dict(old_secs).get("Targets", []),
                              dict(new_secs).get("Targets", []),
                              [t for t, _ in new_secs], rerun_modules)
    while old_head and not old_head[-1]:
        old_head = old_head[:-1]
    return _join([*old_head, "", note, ""], [*groups, ("Targets", targets), *kept_tail])


def _table_at(body: list[str]) -> int:
    """Where a section's table starts (the prose before it is a person's)."""
    return next((i for i, line in enumerate(body) if line.startswith("|")), len(body))


def _merged_targets(old: list[str], new: list[str], groups: Sequence[str],
                    modules: Sequence[str]) -> list[str]:
    def stale(line: str) -> bool:
        return (line.startswith("Time taken:") or line == "- no targets were measured"
                or any(line.startswith(f"- {g} / ") for g in groups)
                or any(line.startswith(f"- **{m}**:") for m in modules))
    kept = [line for line in old if line and not stale(line)]
    return ["", *[line for line in new if line.startswith("- ") and line not in kept],
            *kept, "", *[line for line in new if line.startswith("Time taken:")], ""]


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
    text = render(outcomes, quick=args.quick, now=datetime.now().astimezone(), load=load)
    if args.out.exists():
        text = merge(args.out.read_text(), text, args.only, only=bool(args.only))
    args.out.write_text(text)
    print(f"bench: wrote {args.out}")
    return 1 if any(o.error for o in outcomes) else 0  # a missed target is a finding, not an error


if __name__ == "__main__":
    raise SystemExit(main())
