"""What a run says about itself: the `run_start` event and banner, and the header and trailer
of every attempt log (LOG-42, SUP-95, SUP-96)."""

from __future__ import annotations

import os
from datetime import datetime

from aidd import __version__
from aidd.budget.prices import Cost, price_table
from aidd.prompts.select import ModelRole, Selection, choose_model
from aidd.run.journal import Journal
from aidd.run.outcomes import format_cost, format_duration
from aidd.run.phases import Phase, PhaseState
from aidd.run.preflight import RunPlan
from aidd.run.previousrun import Ending, PreviousRun
from aidd.session.outcome import SessionOutcome

# The switches `run_start.flags` lists when they are on.
_SWITCHES = ("todo", "validate", "in_progress", "stop_when_done", "audit_all", "code_after_audit",
             "continue_on_timeout", "keep_children", "no_checkpoints", "no_clean",
             "extract_structured", "strict_exit")


def emit_run_start(plan: RunPlan, journal: Journal) -> None:
    s = plan.settings
    if plan.mode_conflict:
        journal.say(plan.mode_conflict)
    journal.say(f"aidd {__version__} on {plan.paths.root} with {s.cli} {plan.cli_version} "
                f"({plan.mode.value} mode)")
    journal.events.emit(
        "run_start",
        aidd_version=__version__,
        pid=os.getpid(),
        host=os.uname().nodename,
        project_dir=str(plan.paths.root),
        cli=s.cli,
        cli_version=plan.cli_version,
        cli_path=plan.binary,
        mode=plan.mode.value,
        models={"base": s.model,
                **{r.value: choose_model(r, plan.models) for r in ModelRole}},
        limits={"max_iterations": s.max_iterations, "timeout": s.timeout,
                "idle_timeout": s.idle_timeout, "nudge_timeout": plan.nudge_s,
                "max_nudges": s.max_nudges,
                "quit_on_abort": s.quit_on_abort, "max_wall_time": s.max_wall_time or None,
                "max_tokens": s.max_tokens or None, "max_cost_usd": s.max_cost_usd or None,
                "daily_max_tokens": s.daily_max_tokens or None,
                "daily_max_cost_usd": s.daily_max_cost_usd or None, "pace_at": s.pace_at or None},
        flags=[n.replace("_", "-") for n in _SWITCHES if getattr(s, n)],
        filters=plan.feature_filter.to_json() if plan.feature_filter else None,
        audits=[a.name for a in plan.audit_queue or plan.post_audits],
        config_sources=list(s.config_sources),
    )
    _previous_run(plan.previous_run, journal)


def _previous_run(previous: PreviousRun | None, journal: Journal) -> None:
    """How the run before this one ended, after run_start (issue 32)."""
    if previous is None:
        return
    journal.say(previous.line()[0].upper() + previous.line()[1:],
                level="" if previous.ending is Ending.ENDED else "WARN")
    journal.events.emit("previous_run", previous=previous.run, ending=previous.ending.value,
                        reason=previous.reason, attempt=previous.attempt, kind=previous.kind,
                        attempt_reason=previous.attempt_reason, checkpoint=previous.checkpoint,
                        cut_short=previous.cut_short, feature=previous.feature)


def _on(flag: bool) -> str:
    return "on" if flag else "off"


def header_lines(plan: RunPlan, phase: Phase, state: PhaseState, number: int,
                 selection: Selection, model: str | None, now: datetime) -> list[str]:
    s, paths = plan.settings, plan.paths
    of = f" of {s.max_iterations}" if s.max_iterations is not None else ""
    models = {r.value: choose_model(r, plan.models) or "CLI default" for r in ModelRole}
    lines = [
        f"aidd {__version__}",
        f"Iteration {state.index}{of} (log {number:03d})",
        f"Phase: {phase.label}",
        f"Prompt: {selection.kind.value} ({selection.reason})",
        f"Model: {model or 'CLI default'} · " + ", ".join(f"{k} {v}" for k, v in models.items()),
        f"CLI: {s.cli} {plan.cli_version} ({plan.binary})",
        f"Project: {paths.root}",
        f"Limits: max iterations {'unlimited' if s.max_iterations is None else s.max_iterations}"
        f" · timeout {s.timeout}s · idle {s.idle_timeout}s · nudge {plan.nudge_s}s"
        f" · max nudges {s.max_nudges or 'no cap'}",
        f"Switches: stop-when-done {_on(s.stop_when_done)} · quit-on-abort {s.quit_on_abort} · "
        f"continue-on-timeout {_on(s.continue_on_timeout)} · no-clean {_on(s.no_clean)} · "
        f"extract {_on(s.extract_structured)} · keep-children {_on(s.keep_children)} · "
        "checkpoints " + ("off (refused: see the warning)" if plan.checkpoints_refused else
                          _on(not s.no_checkpoints)),
        "Filters: " + (plan.feature_filter.describe() if plan.feature_filter else "none"),
    ]
    if s.gate:  # each command as the user wrote it (or its name), as every gate line says it
        lines.append("Gate: " + " · ".join(c.name for c in s.gate))
    if len(plan.audit_queue) > 1 or len(plan.post_audits) > 1:
        queue = plan.audit_queue or plan.post_audits
        lines.append("Audit queue: " + ", ".join(a.name for a in queue))
    if s.prompt:
        lines.append("Directive: " + s.prompt[:60].replace("\n", " ") + "…")
    if plan.previous_run is not None:
        lines.append("Previous run: " + plan.previous_run.line().removeprefix("the previous run "))
    if plan.kept_branches:
        lines.append("Kept branches (a stopped run's unmerged work): "
                     + ", ".join(plan.kept_branches))
    lines += [
        "Config: " + (", ".join(s.config_sources) or "built-in defaults and flags"),
        "Overrides: " + (", ".join(plan.renderer.overridden_files()) or "none"),
        f"Log: {paths.rel(paths.log(number))} · prompt: "
        f"{paths.rel(paths.log(number, '.prompt.md'))}",
        f"Started: {now.isoformat(timespec='seconds')}",
    ]
    return lines


def header_summary(plan: RunPlan, state: PhaseState, number: int, selection: Selection,
                   model: str | None) -> str:
    """The header in one line, for a compact console after the run's banner (issue 30)."""
    of = f" of {plan.settings.max_iterations}" if plan.settings.max_iterations is not None else ""
    return (f"--- iteration {state.index}{of} (log {number:03d}) · {selection.kind.value} "
            f"({selection.reason}) · {model or 'CLI default'} ---")


def trailer_lines(plan: RunPlan, state: PhaseState, number: int, outcome: SessionOutcome,
                  cost: Cost, now: datetime) -> list[str]:
    lines = [
        f"{plan.adapter.display_name} finished: result {outcome.result} "
        f"({outcome.outcome.value}, {outcome.reason.value}) after "
        f"{format_duration(outcome.duration_s)}",
    ]
    usage = _usage(outcome, cost)
    if usage:
        lines.append(usage)
    lines += [
        f"--- end of iteration {state.index} (attempt {number:03d}) ---",
        f"Finished: {now.isoformat(timespec='seconds')}",
    ]
    return lines


def _usage(outcome: SessionOutcome, cost: Cost) -> str:
    parts = []
    if outcome.tokens:
        parts.append("tokens " + ", ".join(f"{k} {v}" for k, v in outcome.tokens.items() if v))
    if cost.usd is not None:
        prices = f" at {cost.model} prices of {price_table().date}" if cost.estimated else ""
        parts.append(f"cost {format_cost(cost.usd, cost.estimated)}{prices}")
    elif outcome.tokens and any(outcome.tokens.values()):
        parts.append(f"cost unknown (no price for {cost.model or 'the CLI default model'})")
    return "Usage: " + " · ".join(parts) if parts else ""
