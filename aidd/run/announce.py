"""The `run_start` event and console banner (LOG-42, CLI-37, PRM-3)."""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

from aidd import __version__
from aidd.prompts.select import ModelRole, choose_model, mode_conflict

if TYPE_CHECKING:
    from aidd.run.context import RunContext

_SWITCHES = ("todo", "validate", "in_progress", "stop_when_done", "audit_all", "code_after_audit",
             "continue_on_timeout", "keep_children", "no_clean", "extract_structured")


def run_mode(ctx: RunContext) -> str:
    s = ctx.settings
    if s.prompt:
        return "directive"
    if ctx.plan.audit_queue:
        return "audit"
    for name in ("todo", "validate", "in_progress"):
        if getattr(s, name):
            return name.replace("_", "-")
    return "default"


def emit_run_start(ctx: RunContext) -> None:
    s, plan = ctx.settings, ctx.plan
    conflict = mode_conflict(directive=s.prompt or "", audit=bool(plan.audit_queue), todo=s.todo,
                             validate=s.validate, in_progress=s.in_progress)
    if conflict:
        ctx.say(conflict)
    models = ctx.model_options()
    ctx.say(f"aidd {__version__} on {plan.paths.root} with {s.cli} {plan.cli_version} "
            f"({run_mode(ctx)} mode)")
    ctx.events.emit(
        "run_start",
        aidd_version=__version__,
        pid=os.getpid(),
        host=socket.gethostname(),
        project_dir=str(plan.paths.root),
        cli=s.cli,
        cli_version=plan.cli_version,
        cli_path=plan.binary,
        mode=run_mode(ctx),
        models={"base": s.model, **{r.value: choose_model(r, models) for r in ModelRole}},
        limits={"max_iterations": s.max_iterations, "timeout": s.timeout,
                "idle_timeout": s.idle_timeout,
                "nudge_timeout": s.idle_nudge_timeout if s.nudge_enabled else 0,
                "quit_on_abort": s.quit_on_abort},
        flags=[n.replace("_", "-") for n in _SWITCHES if getattr(s, n)],
        filters=plan.feature_filter.to_json() if plan.feature_filter else None,
        audits=[a.name for a in plan.audit_queue or plan.post_audits],
        config_sources=list(s.config_sources),
    )
