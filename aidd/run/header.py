"""The header and trailer of every NNN.log (SUP-95, SUP-96)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aidd import __version__
from aidd.prompts.select import ModelRole, Selection, choose_model
from aidd.run.outcomes import format_duration

if TYPE_CHECKING:
    from aidd.run.context import RunContext
    from aidd.run.supervisor import Phase, PhaseState
    from aidd.session.outcome import SessionOutcome


def _on(flag: bool) -> str:
    return "on" if flag else "off"


def header_lines(ctx: RunContext, phase: Phase, state: PhaseState, number: int,
                 selection: Selection, model: str | None) -> list[str]:
    s, plan = ctx.settings, ctx.plan
    paths = plan.paths
    of = f" of {s.max_iterations}" if s.max_iterations is not None else ""
    options = ctx.model_options()
    models = {r.value: choose_model(r, options) or "CLI default" for r in ModelRole}
    lines = [
        f"aidd {__version__}",
        f"Iteration {state.index}{of} (log {number:03d})",
        f"Phase: {phase.label}",
        f"Prompt: {selection.kind.value} ({selection.reason})",
        f"Model: {model or 'CLI default'} · " + ", ".join(f"{k} {v}" for k, v in models.items()),
        f"CLI: {s.cli} {ctx.cli_version} ({plan.binary})",
        f"Project: {paths.root}",
        f"Limits: max iterations {'unlimited' if s.max_iterations is None else s.max_iterations}"
        f" · timeout {s.timeout}s · idle {s.idle_timeout}s · nudge "
        f"{s.idle_nudge_timeout if s.nudge_enabled else 0}s",
        f"Switches: stop-when-done {_on(s.stop_when_done)} · quit-on-abort {s.quit_on_abort} · "
        f"continue-on-timeout {_on(s.continue_on_timeout)} · no-clean {_on(s.no_clean)} · "
        f"extract {_on(s.extract_structured)} · keep-children {_on(s.keep_children)}",
        "Filters: " + (plan.feature_filter.describe() if plan.feature_filter else "none"),
    ]
    if len(plan.audit_queue) > 1 or len(plan.post_audits) > 1:
        queue = plan.audit_queue or plan.post_audits
        lines.append("Audit queue: " + ", ".join(a.name for a in queue))
    if s.prompt:
        lines.append("Directive: " + s.prompt[:60].replace("\n", " ") + "…")
    lines += [
        "Config: " + (", ".join(s.config_sources) or "built-in defaults and flags"),
        "Overrides: " + (", ".join(plan.renderer.overridden_files()) or "none"),
        f"Log: {paths.rel(paths.log(number))} · prompt: "
        f"{paths.rel(paths.log(number, '.prompt.md'))}",
        f"Started: {ctx.clock.now().isoformat(timespec='seconds')}",
    ]
    return lines


def trailer_lines(ctx: RunContext, state: PhaseState, number: int,
                  outcome: SessionOutcome) -> list[str]:
    lines = [
        f"{ctx.plan.adapter.display_name} finished: result {outcome.result} "
        f"({outcome.outcome.value}, {outcome.reason.value}) after "
        f"{format_duration(outcome.duration_s)}",
    ]
    usage = _usage(outcome)
    if usage:
        lines.append(usage)
    lines += [
        f"--- end of iteration {state.index} (attempt {number:03d}) ---",
        f"Finished: {ctx.clock.now().isoformat(timespec='seconds')}",
    ]
    return lines


def _usage(outcome: SessionOutcome) -> str:
    parts = []
    if outcome.tokens:
        parts.append("tokens " + ", ".join(f"{k} {v}" for k, v in outcome.tokens.items() if v))
    if outcome.cost_usd is not None:
        parts.append(f"cost ${outcome.cost_usd:.4f}")
    return "Usage: " + " · ".join(parts) if parts else ""
