"""One attempt, SUP-3 steps 5-12: sync, choose the prompt, open the log, prepare the project,
render, run the agent, write the trailer. The log stays open for the post-attempt messages."""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from aidd.fsio import write_atomic
from aidd.logs.transcript import Transcript
from aidd.project.detect import Origin, onboarding_complete
from aidd.prompts.select import CascadeState, Selection, choose_model, select_prompt
from aidd.run.header import header_lines, trailer_lines
from aidd.run.outcomes import PhaseKind
from aidd.session.outcome import Outcome

if TYPE_CHECKING:
    from aidd.run.context import RunContext
    from aidd.run.supervisor import Phase, PhaseState
    from aidd.session.outcome import SessionOutcome


@dataclass
class Attempt:
    """A finished attempt whose log is still open for post-attempt messages (SUP-3 step 12+)."""

    ctx: RunContext
    number: int
    selection: Selection
    outcome: SessionOutcome
    transcript: Transcript
    fingerprint_before: str | None

    @property
    def rate_limited(self) -> bool:
        return self.outcome.outcome is Outcome.RATE_LIMITED

    def close(self, renamed: str | None = None) -> None:
        if self.ctx.transcript is not self.transcript:
            return
        self.transcript.close()
        self.ctx.transcript = None
        path = self.transcript.path
        if renamed:
            target = path.with_name(path.name.removesuffix(".log") + renamed)
            path.rename(target)
            path = target
        self.ctx.logs_written.append(path)

    def __enter__(self) -> Attempt:
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        if ev is None or not isinstance(ev, Exception) or _is_exit(ev):
            self.close()


def _is_exit(exc: BaseException) -> bool:
    from aidd.run.outcomes import RunExit

    return isinstance(exc, RunExit)


class IterationRunner:
    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx

    def run(self, phase: Phase, state: PhaseState, completion_review: bool) -> Attempt:
        ctx = self.ctx
        sync_messages = self._sync()
        selection = select_prompt(self._cascade(phase, completion_review))
        model = choose_model(selection.model_role, self.ctx.model_options())
        number = ctx.counters.take_number()
        transcript = Transcript(ctx.plan.paths.log(number), ctx.console, ctx.clock.now,
                                root=ctx.plan.paths.root)
        ctx.transcript = transcript
        for line in header_lines(ctx, phase, state, number, selection, model):
            transcript.plain(line)
        for message, level in sync_messages:
            transcript.message(message, level)
        self._prepare(phase, selection)
        before = self._fingerprint()
        prompt = self._render(phase, state, number, selection, model)
        outcome = self._execute(phase, number, state, selection, model, prompt)
        for line in trailer_lines(ctx, state, number, outcome):
            transcript.plain(line)
        self._record_end(number, outcome)
        return Attempt(ctx, number, selection, outcome, transcript, before)

    # -- steps 5-6 ------------------------------------------------------------------------
    def _sync(self) -> list[tuple[str, str]]:
        from aidd.project.sync import sync_lists

        s = self.ctx.settings
        result = sync_lists(self.ctx.plan.paths.root, aidd_home=s.aidd_home,
                            xdg_config_home=s.xdg_config_home, home=s.home)
        return [(m.text, m.level) for m in result.messages]

    def _cascade(self, phase: Phase, completion_review: bool) -> CascadeState:
        s, paths = self.ctx.settings, self.ctx.plan.paths
        remediation = phase.kind is PhaseKind.REMEDIATION
        return CascadeState(
            directive=s.prompt or "",
            audit_phase=phase.kind in (PhaseKind.AUDIT, PhaseKind.POST_COMPLETION_AUDIT),
            remediation=remediation,
            completion_pending=completion_review or (
                phase.kind is PhaseKind.MAIN and paths.completion_pending.exists()),
            todo=s.todo,
            validate=s.validate,
            in_progress=s.in_progress,
            onboarding_complete=onboarding_complete(paths),
            existing_codebase=self.ctx.plan.origin is Origin.EXISTING,
        )

    # -- step 8 ---------------------------------------------------------------------------
    def _prepare(self, phase: Phase, selection: Selection) -> None:
        from aidd.project.scaffold import copy_artifacts, copy_spec
        from aidd.prompts.select import PromptKind

        ctx = self.ctx
        paths, s, t = ctx.plan.paths, ctx.settings, ctx.transcript
        assert t is not None
        for name in copy_artifacts(paths):
            t.message(f"created .automaker/{name} from the template")
        if selection.kind is PromptKind.INITIALIZER and s.spec is not None and copy_spec(
            s.spec, paths
        ):
            t.message(f"copied {s.spec} to .automaker/app_spec.txt")
        if phase.audit is not None:
            from aidd.audits.definitions import copy_definitions

            copy_definitions(phase.audit, paths)
        if s.cli == "opencode":
            from aidd.agents.opencode_config import ensure_opencode_permissions

            for warning in ensure_opencode_permissions(paths.root):
                ctx.warn(warning, file="opencode.json")
        self._write_status()

    def _write_status(self) -> None:
        from aidd.reports.status import build_status, render_status_text, write_status

        paths = self.ctx.plan.paths
        report = build_status(paths, self.ctx.plan.feature_filter, self.ctx.clock.now())
        write_status(paths, render_status_text(report))

    def _fingerprint(self) -> str | None:
        """The tree before the agent runs: the previous stuck check's, when one just ran. What
        sync wrote since then counts as this iteration's change, so it never makes a false
        stuck."""
        carried, self.ctx.last_fingerprint = self.ctx.last_fingerprint, None
        if self.ctx.settings.max_iterations is not None:
            return None
        if carried is not None:
            return carried
        from aidd.project.fingerprint import fingerprint

        return fingerprint(self.ctx.plan.paths.root)

    # -- step 10 --------------------------------------------------------------------------
    def _render(self, phase: Phase, state: PhaseState, number: int, selection: Selection,
                model: str | None) -> str:
        from aidd.run.prompting import build_context

        ctx = self.ctx
        context = build_context(ctx, phase, state, number, selection)
        self.context = context
        text = ctx.plan.renderer.render_prompt(context)
        prompt_file = ctx.plan.paths.log(number, ".prompt.md")
        write_atomic(prompt_file, text, root=ctx.plan.paths.root)
        size = len(text.encode("utf-8"))
        assert ctx.transcript is not None
        ctx.transcript.message(
            f"Sending {selection.kind.value} prompt to {ctx.plan.adapter.display_name} "
            f"({size} bytes)")
        ctx.events.emit(
            "iteration_start", number=number, index=state.index,
            of=ctx.settings.max_iterations, phase=phase.kind.value, kind=selection.kind.value,
            reason=selection.reason, model=model, prompt_bytes=size,
            log=ctx.plan.paths.rel(ctx.plan.paths.log(number)),
            prompt_file=ctx.plan.paths.rel(prompt_file))
        return text

    # -- step 11 --------------------------------------------------------------------------
    def _execute(self, phase: Phase, number: int, state: PhaseState, selection: Selection,
                 model: str | None, prompt: str) -> SessionOutcome:
        from aidd.session.runner import AttemptRequest, run_attempt

        ctx = self.ctx
        s = ctx.settings
        assert ctx.transcript is not None
        nudge = ctx.plan.renderer.render_nudge(self.context.with_nudge(s.idle_nudge_timeout))
        request = AttemptRequest(
            adapter=ctx.plan.adapter, binary=ctx.plan.binary, project_dir=ctx.plan.paths.root,
            prompt=prompt, model=model, env=s.environ, prompt_kind=selection.kind.value,
            audit_name=phase.audit.name if phase.audit is not None else None,
            timeout_s=float(s.timeout),
            idle_timeout_s=float(s.idle_timeout),
            idle_nudge_s=float(s.idle_nudge_timeout) if s.nudge_enabled else 0.0,
            nudge_text=nudge, keep_children=s.keep_children, transcript=ctx.transcript,
            events=ctx.events, number=number, clock=ctx.clock, interrupt=ctx.interrupt,
            rate_limit_buffer_s=float(s.rate_limit_buffer),
            rate_limit_fallback_s=float(s.rate_limit_fallback),
        )
        return run_attempt(request)

    # -- step 12 --------------------------------------------------------------------------
    def _record_end(self, number: int, outcome: SessionOutcome) -> None:
        ctx = self.ctx
        ctx.events.emit(
            "iteration_end", number=number, result=outcome.result,
            outcome=outcome.outcome.value, reason=outcome.reason.value,
            exit_status=outcome.exit_status,
            duration_s=round(outcome.duration_s, 3), bytes=outcome.bytes_out,
            tokens=outcome.tokens, cost_usd=outcome.cost_usd,
            conversation_id=outcome.conversation_id)
        if ctx.settings.extract_structured:
            from aidd.logs.extract import write_extraction

            assert ctx.transcript is not None
            warning = write_extraction(ctx.transcript.path)
            if warning:
                ctx.warn(warning, file=str(ctx.transcript.path))

