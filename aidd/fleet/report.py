"""`aidd fleet report`: one morning report across a fleet's projects: per project its last run's
end, attempts by result, features passing, cost; then a total line. Text, or `--json`.

Per project, from where the run's record is: a run that ran on this machine only (or of which
the fleet's server knows nothing) from the project's own `aidd --report --json` here
(docs/report.md, schema 2, whose keys read here are schema 1's: a `path` project at its path,
a `git` project in this machine's checkout); a run that ran, at least partly, on other
machines (their events.jsonl never leave them), or that has no report here, from the progress
the server keeps of its latest run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from html import escape
from pathlib import Path
from typing import Any

from aidd.console import json_text
from aidd.errors import result_words
from aidd.fleet.checkout import checkout_dir
from aidd.fleet.connection import without_credentials
from aidd.fleet.control import Row
from aidd.fleet.records import ProjectJob
from aidd.reports.morning import html
from aidd.reports.morning.fmt import clean

SCHEMA = 1
_TIMEOUT_S = 300


LOCAL, SERVER = "local", "server"


@dataclass(frozen=True)
class ProjectReport:
    """One project's line: aidd's report here (`source` local), or the server's progress of
    its latest run (`source` server, `report` None), or neither (`error` says why)."""

    name: str
    dir: str
    report: dict[str, Any] | None
    error: str = ""
    row: Row | None = None  # the server's view of the project's latest run, when it was asked
    source: str | None = None  # LOCAL, SERVER, or None: no report from anywhere


def gather(jobs: Sequence[ProjectJob], data_dir: Path, since: str | None,
           rows: Mapping[str, Row] | None = None, here: str = "") -> list[ProjectReport]:
    """Each project's report; `rows` (by project) are the server's, `here` this machine's
    name in the fleet (progress.this_host)."""
    rows = rows or {}
    return [_one(job, data_dir, since, rows.get(job.name), here) for job in jobs]


def _one(job: ProjectJob, data_dir: Path, since: str | None, row: Row | None,
         here: str) -> ProjectReport:
    known = row if row is not None and row.progress.hosts else None  # hosts: a run's figures
    if known is not None and set(known.progress.hosts) != {here}:  # (partly) run elsewhere
        return ProjectReport(job.name, str(_place(job, data_dir)), None, row=known,
                             source=SERVER)
    # Every aidd run of the workflow run that ran (a retry is a new aidd run), not only the
    # last one; a run not started yet (queued) leaves the window at aidd's last run.
    local = _local(job, data_dir, since or (known.started if known is not None else "") or None)
    if local.report is not None:
        return replace(local, row=row, source=LOCAL)
    if known is not None:  # no report here (the checkout gone, aidd's error): the server's
        return replace(local, error="", row=known, source=SERVER)
    return replace(local, row=row)


def _place(job: ProjectJob, data_dir: Path) -> Path:
    return Path(job.path) if job.path else checkout_dir(job, data_dir)


def _local(job: ProjectJob, data_dir: Path, since: str | None) -> ProjectReport:
    """aidd's own report of the project as it is on this machine."""
    where = _place(job, data_dir)
    if not where.is_dir():
        return ProjectReport(job.name, str(where), None, "not checked out on this machine"
                             if job.git else "no such directory")
    argv = [sys.executable, "-m", "aidd", "--project-dir", str(where), "--report", "--json",
            *(["--since", since] if since else [])]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False,
                              stdin=subprocess.DEVNULL, timeout=_TIMEOUT_S,
                              env=without_credentials(os.environ))
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
    row = item.row
    extra = {"source": item.source, "hosts": list(row.progress.hosts) if row else None,
             "state": row.state.value if row else None,
             "message": (row.message or None) if row else None}
    if item.source == SERVER and row is not None:
        return {**_from_server(item, row), **extra}
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
        "cost_usd": cost, **extra,
    }


def _from_server(item: ProjectReport, row: Row) -> dict[str, Any]:
    """The figures the server keeps of the latest run (summed over its attempts, on every
    worker): what aidd's report would say but features became passing (None: not known)."""
    p = row.progress
    cost_known = p.costs_unknown < p.ended or p.ended == 0  # as aidd's report: the known sum
    return {
        "project": item.name, "dir": item.dir, "error": None,
        "last_run": {"run": p.run_id or None, "ended_at": p.last_end_at or None,
                     "reason": p.run_reason or None, "exit_code": row.exit_code,
                     "attempts": None},
        "attempts": p.ended,
        "by_result": [{"result": code, "label": result_words(code), "count": n}
                      for code, n in sorted((int(k), n) for k, n in p.by_result.items())],
        "features_passing": p.features_passing, "features_total": p.features_total,
        "became_passing": None,
        "cost_usd": round(p.cost_usd, 6) if cost_known else None,
    }


def total(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    def added(key: str) -> int | float:
        found: list[int | float] = [r[key] for r in rows if isinstance(r[key], int | float)]
        return sum(found)

    return {"projects": len(rows), "reported": sum(1 for r in rows if r["error"] is None),
            "attempts": added("attempts"), "features_passing": added("features_passing"),
            "features_total": added("features_total"), "became_passing": added("became_passing"),
            "cost_usd": round(added("cost_usd"), 4)}


def as_json(fleet: str, items: Sequence[ProjectReport], note: str = "") -> str:
    rows = [summary(item) for item in items]
    for row, item in zip(rows, items, strict=True):
        row["report"] = item.report  # the project's whole report, as aidd --report --json
    return json_text({"schema": SCHEMA, "fleet": fleet, "projects": rows,
                      "total": total(rows), "note": note or None})


def as_text(fleet: str, items: Sequence[ProjectReport], note: str = "") -> str:
    rows = [summary(item) for item in items]
    width = max(len(r["project"]) for r in rows) if rows else 0
    lines = [f"fleet {fleet}: {len(rows)} project{'s' if len(rows) != 1 else ''}"]
    lines += [f"{r['project']:<{width}}  {_line(r)}" for r in rows]
    t = total(rows)
    lines.append(f"{'total':<{width}}  {t['reported']}/{t['projects']} reported · attempts "
                 f"{t['attempts']} · features {t['features_passing']}/{t['features_total']} "
                 f"passing (+{t['became_passing']}) · ${t['cost_usd']:.2f}")
    if note:
        lines.append(f"note: {note}")
    return "\n".join(lines) + "\n"


def as_html(fleet: str, items: Sequence[ProjectReport], note: str = "") -> str:
    """The text's lines as one self-contained page (the morning report's page): a row per
    project, then each project's own "Look at first" (its health reasons and next steps)."""
    rows = [summary(item) for item in items]
    t = total(rows)
    parts = [html.heading(f"aidd fleet report: {fleet}"),
             html.table(["project", "last run", "attempts", "features", "cost", "note"],
                        [(r["project"], *_cells(r)) for r in rows], {2}),
             f"<p>{t['reported']}/{t['projects']} reported · attempts {t['attempts']} · "
             f"features {t['features_passing']}/{t['features_total']} passing · "
             f"${t['cost_usd']:.2f}{escape(f' · note: {note}') if note else ''}</p>"]
    for row, item in zip(rows, items, strict=True):
        health = (item.report or {}).get("health")
        reasons = health.get("reasons") if isinstance(health, dict) else None
        if isinstance(reasons, list) and reasons:
            listed = "".join(f"<li>{escape(clean(str(r.get('what')), 300))}; next: "
                             f"{escape(clean(str(r.get('next')), 300))}</li>"
                             for r in reasons if isinstance(r, dict))
            parts.append(html.section(f"{row['project']}: look at first", f"<ul>{listed}</ul>"))
    return html.page(f"aidd fleet report: {fleet}", parts)


def _cells(row: dict[str, Any]) -> tuple[str, int, str, str, str]:
    if row["error"] is not None:
        return ("no report", 0, "", "", clean(str(row["error"]), 300))
    cost = row["cost_usd"]
    end = _server_end(row) if row["source"] == SERVER else _run_end(row["last_run"])
    known = row["features_total"] is not None
    return (end, row["attempts"] or 0,
            f"{row['features_passing']}/{row['features_total']}" if known else "unknown",
            f"${cost:.2f}" if isinstance(cost, int | float) else "unknown",
            clean(row["message"], 300) if row.get("message") else "")


def _line(row: dict[str, Any]) -> str:
    said = f" · {clean(row['message'], 300)}" if row.get("message") else ""
    return _figures(row) + said


def _figures(row: dict[str, Any]) -> str:
    if row["error"] is not None:
        return f"no report: {row['error']}"
    results = " ".join(f"{r['result']}×{r['count']}" for r in row["by_result"])
    cost = row["cost_usd"]
    money = f"${cost:.2f}" if isinstance(cost, int | float) else "cost unknown"
    attempts = f"attempts {row['attempts'] or 0}{f' ({results})' if results else ''}"
    if row["source"] == SERVER:
        features = (f"features {row['features_passing']}/{row['features_total']} passing"
                    if row["features_total"] is not None else "features unknown")
        hosts = ", ".join(clean(h, 80) for h in row["hosts"])
        return (f"{_server_end(row)} on {hosts} · {attempts} · {features} · {money} "
                "(from the server)")
    return (f"{_run_end(row['last_run'])} · {attempts} · features {row['features_passing']}/"
            f"{row['features_total']} passing (+{row['became_passing']}) · {money}")


def _server_end(row: dict[str, Any]) -> str:
    """The workflow's state (done, running, ...), its exit and the time of the last end."""
    run = row["last_run"]
    code, ended = run["exit_code"], str(run["ended_at"] or "")[:16].replace("T", " ")
    return f"{row['state']}{f' (exit {code})' if code is not None else ''}" \
           f"{f' at {ended}' if ended else ''}"


def _run_end(run: dict[str, Any] | None) -> str:
    if run is None:
        return "no run"
    code = run.get("exit_code")
    ended = str(run.get("ended_at") or "")[:16].replace("T", " ")
    return f"{run.get('reason')}{f' (exit {code})' if code is not None else ''}" \
           f"{f' at {ended}' if ended else ''}"
