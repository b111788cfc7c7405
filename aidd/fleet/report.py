"""`aidd fleet report`: one morning report across a fleet's projects, built from each project's
`aidd --report --json` (docs/report.md, schema 1): per project its last run's end, attempts by
result, features passing, cost; then a total line. Text, or `--json`.

A `path` project is reported at its path; a `git` project in this machine's checkout of it
(the worker's data dir), the branch's other attempts being on other machines.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aidd.fleet.checkout import checkout_dir
from aidd.fleet.records import ProjectJob

SCHEMA = 1
_TIMEOUT_S = 300


@dataclass(frozen=True)
class ProjectReport:
    """One project's line: aidd's report (None when it could not be made, with `error`)."""

    name: str
    dir: str
    report: dict[str, Any] | None
    error: str = ""


def gather(jobs: Sequence[ProjectJob], data_dir: Path, since: str | None) -> list[ProjectReport]:
    return [_one(job, data_dir, since) for job in jobs]


def _one(job: ProjectJob, data_dir: Path, since: str | None) -> ProjectReport:
    where = Path(job.path) if job.path else checkout_dir(job, data_dir)
    if not where.is_dir():
        return ProjectReport(job.name, str(where), None, "not checked out on this machine"
                             if job.git else "no such directory")
    argv = [sys.executable, "-m", "aidd", "--project-dir", str(where), "--report", "--json",
            *(["--since", since] if since else [])]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False,
                              stdin=subprocess.DEVNULL, timeout=_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return ProjectReport(job.name, str(where), None, f"aidd --report took over {_TIMEOUT_S} s")
    try:
        found = json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        found = None
    if not isinstance(found, dict):
        lines = (done.stderr or done.stdout).strip().splitlines()
        why = lines[-1] if lines else f"aidd --report exited {done.returncode}"
        return ProjectReport(job.name, str(where), None, why.removeprefix("aidd: error: "))
    return ProjectReport(job.name, str(where), found)


def summary(item: ProjectReport) -> dict[str, Any]:
    """The figures of one project's line (None where its report has none)."""
    report = item.report or {}
    runs = [r for r in report.get("runs", []) if isinstance(r, dict)]
    attempts = report.get("attempts") or {}
    features = report.get("features") or {}
    cost = ((report.get("usage") or {}).get("cost_usd") or {}).get("total")
    last = runs[-1] if runs else None
    return {
        "project": item.name, "dir": item.dir, "error": item.error or None,
        "last_run": None if last is None else {
            k: last.get(k) for k in ("run", "ended_at", "reason", "exit_code", "attempts")},
        "attempts": attempts.get("total"),
        "by_result": [{k: r.get(k) for k in ("result", "label", "count")}
                      for r in attempts.get("by_result", []) if isinstance(r, dict)],
        "features_passing": features.get("passing_now"),
        "features_total": features.get("total_now"),
        "became_passing": len(features.get("became_passing") or []) if features else None,
        "cost_usd": cost,
    }


def total(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    def added(key: str) -> int | float:
        found: list[int | float] = [r[key] for r in rows if isinstance(r[key], int | float)]
        return sum(found)

    return {"projects": len(rows), "reported": sum(1 for r in rows if r["error"] is None),
            "attempts": added("attempts"), "features_passing": added("features_passing"),
            "features_total": added("features_total"), "became_passing": added("became_passing"),
            "cost_usd": round(added("cost_usd"), 4)}


def as_json(fleet: str, items: Sequence[ProjectReport]) -> str:
    rows = [summary(item) for item in items]
    for row, item in zip(rows, items, strict=True):
        row["report"] = item.report  # the project's whole report, as aidd --report --json
    return json.dumps({"schema": SCHEMA, "fleet": fleet, "projects": rows,
                       "total": total(rows)}, indent=2) + "\n"


def as_text(fleet: str, items: Sequence[ProjectReport]) -> str:
    rows = [summary(item) for item in items]
    width = max(len(r["project"]) for r in rows) if rows else 0
    lines = [f"fleet {fleet}: {len(rows)} project{'s' if len(rows) != 1 else ''}"]
    lines += [f"{r['project']:<{width}}  {_line(r)}" for r in rows]
    t = total(rows)
    lines.append(f"{'total':<{width}}  {t['reported']}/{t['projects']} reported · attempts "
                 f"{t['attempts']} · features {t['features_passing']}/{t['features_total']} "
                 f"passing (+{t['became_passing']}) · ${t['cost_usd']:.2f}")
    return "\n".join(lines) + "\n"


def _line(row: dict[str, Any]) -> str:
    if row["error"] is not None:
        return f"no report: {row['error']}"
    results = " ".join(f"{r['result']}×{r['count']}" for r in row["by_result"])
    cost = row["cost_usd"]
    return (f"{_run_end(row['last_run'])} · attempts {row['attempts'] or 0}"
            f"{f' ({results})' if results else ''} · features {row['features_passing']}/"
            f"{row['features_total']} passing (+{row['became_passing']}) · "
            f"{'$' + format(cost, '.2f') if isinstance(cost, int | float) else 'cost unknown'}")


def _run_end(run: dict[str, Any] | None) -> str:
    if run is None:
        return "no run"
    code = run.get("exit_code")
    ended = str(run.get("ended_at") or "")[:16].replace("T", " ")
    return f"{run.get('reason')}{f' (exit {code})' if code is not None else ''}" \
           f"{f' at {ended}' if ended else ''}"
