"""One attempt: sync the copy lists, choose the prompt, open the log, prepare the project,
render, run the agent, write the trailer (SUP-3). The log stays open for what the loop says
about the attempt afterwards; the loop closes it."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from aidd.agents.base import COST_FIELD
from aidd.audits.definitions import copy_definitions
from aidd.budget.prices import Cost, attempt_cost
from aidd.clock import Clock
from aidd.fsio import place
from aidd.project.activity import FileActivity
from aidd.project.attemptfeature import feature_of, features_changed
from aidd.project.checkpoints import CheckpointStore
from aidd.project.detect import Origin, onboarding_complete
from aidd.project.fingerprint import fingerprint
from aidd.project.paths import ProjectPaths
from aidd.project.scaffold import copy_artifacts, copy_spec
from aidd.project.sync import sync_lists
from aidd.prompts.context import LastAttemptInfo, ParallelInfo
from aidd.prompts.select import CascadeState, PromptKind, Selection, choose_model, select_prompt
from aidd.reports.running import LiveRun
from aidd.reports.status import StatusFile, refresh_status_file
from aidd.run import nowork
from aidd.run.checkpointing import Checkpointer
from aidd.run.header import header_lines, header_summary, trailer_lines
from aidd.run.journal import Journal
from aidd.run.phases import Phase, PhaseKind, PhaseState
from aidd.run.preflight import RunPlan
from aidd.run.prompting import build_context
from aidd.run.signals import Interrupt
from aidd.session.outcome import Outcome, SessionOutcome
from aidd.session.request import AttemptRequest

RunAttempt = Callable[[AttemptRequest], SessionOutcome]
# The last attempt at the same work: the phase, the prompt kind and the feature, when known
Recall = Callable[[Phase, PromptKind, str | None], LastAttemptInfo]


class Attempt(NamedTuple):
    number: int  # its log, NNN.log
    selection: Selection
    outcome: SessionOutcome
    fingerprint_before: str | None  # the tree before the agent ran, for stuck detection
    cost: Cost  # the CLI's figure or aidd's estimate, as iteration_end records it
    changed: tuple[str, ...] = ()  # the files it changed, from its checkpoints, when known
    feature: str | None = None  # the feature folder it worked on (project/attemptfeature)
    tree: str | None = None  # the project's tree at its end (NNN-end), when checkpointed
    # It changed the project outside .automaker/, from its checkpoints (None: not known).
    moved: bool | None = None

    @property
    def rate_limited(self) -> bool:
        return self.outcome.outcome is Outcome.RATE_LIMITED


class IterationRunner:
    def __init__(self, plan: RunPlan, journal: Journal, interrupt: Interrupt, clock: Clock,
                 run_attempt: RunAttempt, gate_report: Callable[[], str] = str,
                 deadline_s: float | None = None,
                 files: Callable[[], FileActivity | None] = lambda: None,
                 recall: Recall = lambda phase, kind, feature: LastAttemptInfo(),
                 tree: ProjectPaths | None = None, store: CheckpointStore | None = None,
                 live: LiveRun | None = None, status: StatusFile | None = None) -> None:
        # The tree the agent works in (a slot's worktree with --parallel N, else the project);
        # aidd's own files (logs, prompt, events, status.md) stay in `plan.paths`.
        self.tree = tree or plan.paths
        self.checkpoints = Checkpointer(plan, journal, clock, self.tree.root, store,
                                        self._quiet)
        self.parallel = ParallelInfo()  # a slot's feature and the others' (set by run/slots)
        self.start_turn: Callable[[], Callable[[], None]] | None = None  # run/slots' turns
        self.plan = plan
        self.journal = journal
        self.interrupt = interrupt
        self.clock = clock
        self._run_attempt = run_attempt
        self.gate_report = gate_report  # a red gate's summary for the prompt (a slot: its own)
        self.deadline_s = deadline_s  # --max-wall-time, on the clock's monotonic scale
        self._files = files  # the run's file watcher (--liveness signals)
        self._files_warned = False
        self._recall = recall
        self._live = live  # the run's own state for status.md: no events read (issue 33)
        self._status = status  # the run's status.md, rewritten with no new file (issue 33)

    def run(self, state: PhaseState, number: int, completion_review: bool,
            carried_fingerprint: str | None) -> Attempt:
        """`carried_fingerprint`: the tree as the previous stuck check saw it, if one just ran
        (one git call less); what sync writes after it counts as this attempt's change, so it
        never makes a false stuck."""
        plan, journal, tree = self.plan, self.journal, self.tree
        sync_messages = sync_lists(tree.root, aidd_home=plan.settings.aidd_home,
                                   xdg_config_home=plan.settings.xdg_config_home,
                                   home=plan.settings.home).messages
        selection = select_prompt(self._cascade(state, completion_review))
        model = choose_model(selection.model_role, plan.models)
        log = journal.open_log(plan.paths.log(number))
        log.header(header_lines(plan, state.phase, state, number, selection, model,
                                self.clock.now()),
                   header_summary(plan, state, number, selection, model))
        for message in sync_messages:
            log.message(message.text, message.level)
        started = self._prepare(state, selection)
        focus = plan.feature_filter.focus if plan.feature_filter is not None else None
        named = self.parallel.feature or (  # the slot's own, else --feature's
            focus.dir_name if focus is not None else None)
        at_start = feature_of(named, (), started)
        context = build_context(plan, state.phase, state, number, selection, self.clock.now(),
                                self.gate_report(),
                                self._recall(state.phase, selection.kind, at_start), tree,
                                self.parallel)
        prompt = self._render(state, number, selection, model,
                              plan.renderer.render_prompt(context), at_start)
        nudge = plan.renderer.render_nudge(context.with_nudge(plan.settings.idle_nudge_timeout))
        start = self.checkpoints.record(number)
        # With checkpoints, stuck detection compares their trees: no `git status` of its own.
        before = None if start is not None else self._fingerprint(carried_fingerprint)
        was = nowork.look_before(tree.root, plan.settings.environ, start, before)
        outcome = self._run_attempt(self._request(state, number, selection, model, prompt, nudge))
        end = self.checkpoints.record(number, "-end")
        outcome = nowork.judge(tree.root, plan.settings.environ, journal, outcome, was,
                               end)
        cost = attempt_cost(outcome.tokens, outcome.cost_usd, outcome.model or model,
                            refused=dict(outcome.refused).get(COST_FIELD))
        self._warn_refused(number, outcome, cost)
        log.plain(trailer_lines(plan, state, number, outcome, cost, self.clock.now()))
        changed = self.checkpoints.changed(start, end)
        feature = feature_of(named, features_changed(changed), started)
        self._record_end(number, outcome, cost, feature)
        return Attempt(number, selection, outcome, before, cost, changed, feature,
                       end.tree if end is not None else None,
                       self.checkpoints.moved(start, end))

    def _cascade(self, state: PhaseState, completion_review: bool) -> CascadeState:
        kind, paths = state.phase.kind, self.tree
        return CascadeState(
            mode=self.plan.mode,
            audit_phase=kind.audits,
            remediation=kind is PhaseKind.REMEDIATION,
            completion_pending=completion_review or (
                kind is PhaseKind.MAIN and paths.completion_pending.exists()),
            onboarding_complete=onboarding_complete(paths),
            existing_codebase=self.plan.origin is Origin.EXISTING,
        )

    def _prepare(self, state: PhaseState, selection: Selection) -> tuple[str, ...]:
        """The files the prompt will name: artifacts from templates, the spec for an
        initializer, the audit's definitions, the CLI's own settings, a fresh status.md;
        returns the features in progress as status.md read them (project/attemptfeature)."""
        plan, journal = self.plan, self.journal
        paths, spec = self.tree, plan.settings.spec
        for name in copy_artifacts(paths):
            journal.say(f"created .automaker/{name} from the template")
        if spec is not None and _takes_spec(selection.kind, paths) and copy_spec(spec, paths):
            journal.say(f"copied {spec} to .automaker/app_spec.txt")
        if state.phase.audit is not None:
            copy_definitions(state.phase.audit, paths)
        for file, warning in plan.adapter.prepare_project(paths.root):
            journal.warn(warning, file=file)
        # status.md is the project's; a slot names its own feature, so its tree's are not read
        report, _ = refresh_status_file(plan.paths, plan.feature_filter, self.clock.now(),
                                        live=self._live, out=self._status)
        return report.started

    def _fingerprint(self, carried: str | None) -> str | None:
        """Stuck detection runs only without --max-iterations (SUP-70)."""
        if self.plan.settings.max_iterations is not None:
            return None
        if carried is not None:
            return carried
        return fingerprint(self.tree.root, self.plan.settings.environ)

    def _render(self, state: PhaseState, number: int, selection: Selection, model: str | None,
                text: str, feature: str | None) -> str:
        plan = self.plan
        prompt_file = plan.paths.log(number, ".prompt.md")
        data = text.encode("utf-8")
        # Atomic, not fsynced: a record, as the log is (docs/decisions.md "Speed")
        place(plan.paths.root, prompt_file.parent, prompt_file, data, 0o644, replace=True)
        size = len(data)
        self.journal.say(f"Sending {selection.kind.value} prompt to "
                         f"{plan.adapter.display_name} ({size} bytes)")
        self.journal.events.emit(
            "iteration_start", number=number, index=state.index,
            of=plan.settings.max_iterations, phase=state.phase.kind.value,
            kind=selection.kind.value, reason=selection.reason, model=model, prompt_bytes=size,
            log=plan.paths.rel(plan.paths.log(number)), prompt_file=plan.paths.rel(prompt_file),
            feature=feature)
        return text

    def _request(self, state: PhaseState, number: int, selection: Selection,
                 model: str | None, prompt: str, nudge: str) -> AttemptRequest:
        plan, s = self.plan, self.plan.settings
        log = self.journal.log
        assert log is not None  # opened by `run`
        return AttemptRequest(
            adapter=plan.adapter, binary=plan.binary, project_dir=self.tree.root,
            prompt=prompt, model=model, env=s.environ, prompt_kind=selection.kind.value,
            audit_name=state.phase.audit.name if state.phase.audit is not None else None,
            timeout_s=float(s.timeout), idle_timeout_s=float(s.idle_timeout),
            idle_nudge_s=float(plan.nudge_s), nudge_text=nudge, keep_children=s.keep_children,
            max_nudges=s.max_nudges,
            transcript=log, events=self.journal.events, number=number, clock=self.clock,
            interrupt=self.interrupt, rate_limit_buffer_s=float(s.rate_limit_buffer),
            rate_limit_fallback_s=float(s.rate_limit_fallback),
            before_kill=lambda: self.checkpoints.record(number, "-prekill"),
            deadline_s=self.deadline_s, liveness=s.liveness,
            busy_timeout_s=float(s.busy_timeout_s), file_activity=self._file_activity(),
            start_turn=self.start_turn,
        )

    def _quiet(self) -> int | None:
        """The file watcher's count of changes, when it watches the tree checkpoints record."""
        files = self._files()
        return files.quiet() if files is not None and files.root == self.tree.root else None

    def _file_activity(self) -> Callable[[], float | None] | None:
        files = self._files()
        if files is None:
            return None
        if files.problem is not None and not self._files_warned:
            self._files_warned = True  # said once: the other signals still work
            self.journal.warn(f"liveness: {files.problem}; file changes are not a sign of life")
        return files.last_change

    def _warn_refused(self, number: int, outcome: SessionOutcome, cost: Cost) -> None:
        """Numbers of the agent's output the sanitiser refused: one warning for the attempt."""
        refused = dict(outcome.refused)
        if cost.refused is not None:
            refused.setdefault(COST_FIELD, cost.refused)
        if not refused:
            return
        listed = ", ".join(f"{name} {value}" for name, value in refused.items())
        fate = ""
        if COST_FIELD in refused:
            fate = ("; its cost is estimated from its tokens" if cost.estimated else
                    "; its cost is unknown")
        self.journal.warn(f"attempt {number:03d}: the agent reported numbers aidd cannot use "
                          f"({listed}), taken as unknown{fate}")

    def _record_end(self, number: int, outcome: SessionOutcome, cost: Cost,
                    feature: str | None) -> None:
        journal, log = self.journal, self.journal.log
        journal.events.emit(
            "iteration_end", number=number, result=outcome.result,
            outcome=outcome.outcome.value, reason=outcome.reason.value,
            exit_status=outcome.exit_status,
            duration_s=round(outcome.duration_s, 3), bytes=outcome.bytes_out,
            tokens=outcome.tokens, cost_usd=cost.usd, cost_estimated=cost.estimated,
            model=cost.model, conversation_id=outcome.conversation_id,
            tool_calls=outcome.tool_calls, assistant_chars=outcome.assistant_chars,
            feature=feature)
        if self.plan.settings.extract_structured and log is not None:
            from aidd.logs.extract import write_extraction  # lazy: off by default (9 classes)

            warning = write_extraction(log.path)
            if warning:
                journal.warn(warning, file=str(log.path))


def _takes_spec(kind: PromptKind, paths: ProjectPaths) -> bool:
    """An initializer copies the spec each time (LAY-22); onboarding an existing project takes
    it where the project has no app_spec.txt yet (a differing one was refused at the start)."""
    return kind is PromptKind.INITIALIZER or (
        kind is PromptKind.ONBOARDING and not paths.app_spec.is_file())
