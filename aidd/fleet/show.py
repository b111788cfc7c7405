"""`aidd fleet status` as text (one line per project) or JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aidd.console import json_text
from aidd.fleet.control import Row


def as_json(rows: Sequence[Row]) -> str:
    return json_text([_record(row) for row in rows])


def _record(row: Row) -> dict[str, Any]:
    p = row.progress
    return {"fleet": row.fleet, "project": row.project, "state": row.state.value,
            "iteration": p.iteration, "last_result": p.result, "exit_code": row.exit_code,
            "features_passing": p.features_passing, "features_total": p.features_total,
            "cost_usd": round(p.cost_usd, 4), "last_event": p.last_event or None,
            "attempt": p.attempt or None, "host": p.host or None, "hosts": p.hosts,
            "by_result": dict(sorted(p.by_result.items(), key=lambda kv: int(kv[0]))),
            "pushed": p.pushed or None, "message": row.message}


def as_text(rows: Sequence[Row]) -> str:
    if not rows:
        return "no fleet project on this server (aidd fleet up FLEET.yaml)\n"
    several = len({row.fleet for row in rows}) > 1
    names = [f"{r.fleet}/{r.project}" if several else r.project for r in rows]
    width = max(len(n) for n in names)
    return "".join(f"{name:<{width}}  {_line(row)}\n" for name, row in zip(names, rows,
                                                                            strict=True))


def _line(row: Row) -> str:
    p = row.progress
    parts = [f"{row.state.value:<8}", f"iteration {p.iteration or '-':>3}",
             f"last result {'-' if p.result is None else p.result:>3}"]
    if p.features_total is not None:
        parts.append(f"features {p.features_passing}/{p.features_total}")
    parts.append(f"${p.cost_usd:.2f}")
    if row.exit_code is not None:
        parts.append(f"exit {row.exit_code}")
    if p.attempt > 1:
        parts.append(f"attempt {p.attempt}")
    if row.message:
        parts.append(f"({row.message})")
    return "  ".join(parts)
