"""The JSON form of the morning report, what `--report --json` prints; its schema is in
docs/report.md (keys are never removed or changed in meaning within a schema version)."""

from __future__ import annotations

from typing import Any

from aidd.reports.morning.fmt import iso
from aidd.reports.morning.record import (
    AttemptRow,
    Diffstat,
    Features,
    Gate,
    MorningReport,
    Parallel,
    RunRow,
)

SCHEMA_VERSION = 2  # 2 (issue 28): "health", the verdict and its reasons, for "attention"


def report_json(report: MorningReport) -> dict[str, Any]:
    usage, pauses, window = report.usage, report.pauses, report.window
    return {
        "schema": SCHEMA_VERSION,
        "generated_at": iso(report.generated_at),
        "project": {"dir": str(report.project_dir), "name": report.project_name},
        "window": {"start": iso(window.start), "end": iso(window.end), "since": window.since},
        "runs": [_run(r) for r in report.runs],
        "attempts": {"total": len(report.attempts),
                     "by_result": [{"result": int(c.key), "label": c.label, "count": c.count}
                                   for c in report.results],
                     "list": [_attempt(a) for a in report.attempts]},
        "failures": [{"reason": c.key, "label": c.label, "count": c.count}
                     for c in report.failures],
        "features": _features(report.features),
        "diffstat": _diffstat(report.diffstat),
        "usage": {"tokens": dict(usage.tokens), "tokens_total": usage.total_tokens,
                  "cost_usd": {"reported": round(usage.reported_usd, 6),
                               "estimated": round(usage.estimated_usd, 6),
                               "total": (round(usage.total_usd, 6) if usage.known_cost
                                         or not usage.unknown_cost else None),
                               "complete": not usage.unknown_cost},
                  "attempts_without_cost": usage.unknown_cost},
        "paused": {"rate_limit_s": round(pauses.rate_limit_s, 3),
                   "rate_limit_sleeps": pauses.rate_limits,
                   "pace_s": round(pauses.pace_s, 3), "paces": pauses.paces},
        "gate": _gate(report.gate),
        "checkpoints": {"total": len(report.checkpoints),
                        "first": report.checkpoints[0].ref if report.checkpoints else None,
                        "last": report.checkpoints[-1].ref if report.checkpoints else None,
                        "refused": report.checkpoints_refused},
        "health": report.health.to_json(),
        "needs_person": [{"feature": r.feature, "run": r.run, "attempts": list(r.attempts),
                          "endings": list(r.endings)} for r in report.needs_person],
        "events": {"lines": report.events.lines, "in_window": report.events.in_window,
                   "skipped": report.events.skipped, "error": report.events.error},
        # `--parallel N` only (docs/report.md): one agent's report is as it was
        **({"parallel": _parallel(report.parallel)} if report.parallel else {}),
    }


def _run(run: RunRow) -> dict[str, Any]:
    return {"run": run.run, "started_at": iso(run.started_at), "ended_at": iso(run.ended_at),
            "reason": run.reason, "exit_code": run.exit_code,
            "duration_s": None if run.duration_s is None else round(run.duration_s, 3),
            "attempts": run.attempts}


def _attempt(a: AttemptRow) -> dict[str, Any]:
    return {"run": a.run, "number": a.number, "started_at": iso(a.started_at),
            "ended_at": iso(a.ended_at), "result": a.result, "outcome": a.outcome,
            "reason": a.reason, "kind": a.kind, "tokens": a.tokens,
            "cost_usd": None if a.cost_usd is None else round(a.cost_usd, 6),
            "cost_estimated": a.cost_estimated,
            **({"slot": a.slot, "feature": a.feature} if a.slot is not None else {})}


def _parallel(p: Parallel) -> dict[str, Any]:
    return {"lanes": [{"slot": lane.slot, "attempts": lane.attempts,
                       "busy_s": round(lane.busy_s, 3), "features": list(lane.features),
                       "merged": lane.merged, "sent_back": lane.sent_back} for lane in p.lanes],
            "merges": dict(p.merges),
            "merge_list": [{"run": m.run, "at": iso(m.at), "slot": m.slot, "feature": m.feature,
                            "attempt": m.number, "result": m.result, "why": m.why}
                           for m in p.listed],
            "kept": list(p.kept)}


def _features(f: Features) -> dict[str, Any]:
    return {
        "source": f.source, "passing_now": f.passing_now, "total_now": f.total_now,
        "passing_at_start": f.passing_at_start,
        "became_passing": [
            {"feature": p.feature, "title": p.title, "run": p.run, "attempt": p.number,
             "at": iso(p.at), "checkpoint": p.checkpoint, "commit": p.commit,
             "subject": p.subject, "passing_now": p.passing_now} for p in f.passed],
        "failed_again": list(f.failed_again),
        "struggling": [{"feature": name, "attempts": n} for name, n in f.struggling],
        "series": [{"at": iso(at), "passing": n} for at, n in f.series],
    }


def _diffstat(d: Diffstat | None) -> dict[str, Any] | None:
    if d is None:
        return None
    return {"source": d.source, "from": d.base, "to": d.head, "files": d.files,
            "added": d.added, "deleted": d.deleted,
            "top": [{"path": c.path, "added": c.added, "deleted": c.deleted} for c in d.top]}


def _gate(g: Gate) -> dict[str, Any]:
    return {"runs": g.runs, "baseline_failing": g.baseline_failing, "reverted": g.reverted,
            "commands": [{"name": r.name, "ok": r.ok, "red": r.red, "attempt": r.number,
                          "new_failures": r.new_failures, "known_failures": r.known_failures,
                          "new": list(r.new), "red_since": r.red_since,
                          "turned_red": r.turned_red} for r in g.commands]}
