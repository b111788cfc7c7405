"""Everything a run checks and resolves before it writes anything: audits, the agent binary,
project and spec, the templates, the mode; the lock last (CLI-20).

Nothing is written to the project before `_claim_project`.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from aidd import __version__
from aidd.agents.base import Adapter
from aidd.agents.registry import ADAPTERS
from aidd.agents.version import untested_warning
from aidd.audits.definitions import AuditDefinition, all_runnable, resolve_audits
from aidd.clock import Clock
from aidd.config import Settings
from aidd.doctor.findings import Status
from aidd.doctor.quick import run_start_checks
from aidd.errors import AgentCliError, NotFoundError, UsageError
from aidd.fsio import UnsafePathError, make_dirs, remove_stale_temps
from aidd.notify.targets import redact_argv
from aidd.project.attemptfeature import started_features
from aidd.project.checkpoints import CheckpointStore
from aidd.project.detect import Origin, detect_origin
from aidd.project.filters import FeatureFilter
from aidd.project.lockfile import ProjectLock
from aidd.project.paths import ProjectPaths, check_layout
from aidd.project.scaffold import SPEC_LIMIT, spec_differs
from aidd.project.worktrees import WorktreeError, Worktrees, base_dir
from aidd.prompts import context as pc
from aidd.prompts.codecache import CodeCache
from aidd.prompts.render import PromptRenderer
from aidd.prompts.select import Mode, ModelOptions, PromptKind, choose_mode
from aidd.reports.running import LastIteration, last_iteration
from aidd.run.previousrun import PreviousRun, judge, name_feature, read_tail
from aidd.session import procfs
from aidd.session.cliproc import probe_version
from aidd.session.idle import IdlePolicy
from aidd.session.orphans import MARK_VAR, kill_orphans, new_mark


@dataclass(frozen=True)
class RunPlan:
    """Everything a run needs, checked and resolved before anything is written."""

    settings: Settings
    paths: ProjectPaths
    feature_filter: FeatureFilter | None
    adapter: Adapter
    binary: str
    cli_version: str
    audit_queue: tuple[AuditDefinition, ...]
    post_audits: tuple[AuditDefinition, ...]
    origin: Origin
    renderer: PromptRenderer
    lock: ProjectLock
    started: datetime
    mode: Mode
    mode_conflict: str | None  # the start-up line when several mode flags compete
    nudge_s: int  # seconds of silence before a nudge; 0: no nudge (the idle machine's rule)
    warnings: tuple[str, ...] = field(default=())
    # Why this run records no checkpoint although asked to (the repository's layout leads
    # outside the project), or None.
    checkpoints_refused: str | None = None
    previous_run: PreviousRun | None = None  # how the run before this one ended (issue 32)
    worktrees: Worktrees | None = None  # --parallel N > 1: the project's worktrees (issue 29)
    # A stopped run's unmerged `aidd/<id>` branches, found at the slots' start (its headers)
    kept_branches: tuple[str, ...] = ()
    # The newest iteration_end before this run: status.md's until this run ends one
    last_iteration: LastIteration | None = None

    @property
    def models(self) -> ModelOptions:
        s = self.settings
        return ModelOptions(s.model, s.init_model, s.code_model, s.audit_model)


def prepare_run(settings: Settings, paths: ProjectPaths, feature_filter: FeatureFilter | None,
                clock: Clock) -> RunPlan:
    warnings: list[str] = []
    audit_queue, post_audits = _audits(settings, paths, warnings)
    adapter = ADAPTERS[settings.cli]
    binary = _find_binary(adapter.binary, settings.environ)
    warnings.extend(_doctor_checks(settings, adapter))
    _check_project_dir(paths.root)
    _worktrees(settings, paths)  # refused now, before the CLI's version is probed
    origin = detect_origin(paths)
    warnings.extend(_check_spec(settings, paths, origin, audit_run=bool(audit_queue)))
    renderer = _compiled_renderer(settings, paths, adapter, clock)
    mode, conflict = choose_mode(directive=bool(settings.prompt), audit=bool(audit_queue),
                                 todo=settings.todo, validate=settings.validate,
                                 in_progress=settings.in_progress)
    nudge_s = _nudge_seconds(settings, warnings)
    if settings.pace_at and not adapter.reports_quota:
        warnings.append(f"--pace-at: {adapter.display_name} reports no quota use, so pacing "
                        f"never pauses")
    cli_version = probe_version(binary, settings.environ, clock=clock)
    untested = untested_warning(adapter, cli_version)
    if untested:
        warnings.append(untested)
    started = clock.now()
    mark = new_mark()
    settings = replace(settings, environ={**settings.environ, MARK_VAR: mark})
    worktrees = _worktrees(settings, paths)  # its git runs carry the mark, as aidd's do
    check_layout(paths)
    lock = _claim_project(paths, started, settings, mark)
    tail = read_tail(paths.events, paths.root)  # the lock is ours: nobody writes
    previous = name_feature(judge(tail, procfs.boot_time()), lambda: started_features(paths))
    gone = lock.previous_holder_gone()
    if gone is not None:
        warnings.append(f"reclaimed the lock of an aidd that is gone (pid {gone})")
        warnings.extend(_kill_orphans(lock, paths, clock))
    # Temp files a killed run left where aidd writes whole files (LAY-12); not beside sync
    # targets or nested scaffolding: finding those would mean walking the whole project.
    remove_stale_temps(paths.root, paths.root, paths.automaker, paths.iterations, paths.audits)
    refused = (None if settings.no_checkpoints else
               CheckpointStore(paths.root, "", settings.environ).refusal())
    if refused is not None:
        warnings.append(f"{refused}: no checkpoint in this run (and no --rollback to it)")
    return RunPlan(settings, paths, feature_filter, adapter, binary, cli_version, audit_queue,
                   post_audits, origin, renderer, lock, started, mode, conflict, nudge_s,
                   tuple(warnings), refused, previous, worktrees,
                   last_iteration=last_iteration(tail))


def _worktrees(settings: Settings, paths: ProjectPaths) -> Worktrees | None:
    """--parallel N > 1 needs the project at the top of its own git repository, and its
    worktrees outside it (docs/parallel.md); checked before anything is written."""
    if settings.parallel <= 1:
        return None
    try:
        base = base_dir(paths.root, settings.environ, settings.worktree_dir)
        return Worktrees(paths.root, settings.environ, base)
    except WorktreeError as exc:
        if "inside the project" in str(exc):
            raise UsageError(f"--worktree-dir: {exc}") from None
        raise UsageError(f"--parallel {settings.parallel} needs a project at the top of its "
                         f"own git repository: {exc}") from None


def _doctor_checks(settings: Settings, adapter: Adapter) -> list[str]:
    """The doctor's quick checks (issue 17): a failure that makes every attempt fail (claude
    as root without IS_SANDBOX=1) stops the run now, with 8; other failures and warnings are
    shown before the first attempt, ok lines are not."""
    findings = run_start_checks(settings, adapter)
    for finding in findings:
        if finding.blocks_run and finding.failed:
            raise AgentCliError(f"{finding.detail}; fix: {finding.fix}")
    return [f"doctor: {f.status.value} {f.name}: {f.detail} (fix: {f.fix})" for f in findings
            if f.status in (Status.WARN, Status.FAIL)]


def _nudge_seconds(settings: Settings, warnings: list[str]) -> int:
    """The idle machine decides whether a nudge can happen; say so when it cannot."""
    if IdlePolicy(settings.idle_nudge_timeout, settings.idle_timeout).nudge_enabled:
        return settings.idle_nudge_timeout
    if settings.idle_nudge_timeout:
        warnings.append("--idle-nudge-timeout is not below --idle-timeout: nudge disabled"
                        if settings.idle_timeout else
                        "--idle-timeout 0 turns idle supervision off: nudge disabled")
    return 0


def _compiled_renderer(settings: Settings, paths: ProjectPaths, adapter: Adapter,
                       clock: Clock) -> PromptRenderer:
    """Every template compiles, and renders once with a sample context, before any agent
    starts: a broken override fails the run at once, not at 3 a.m. (PRM-13, AC-24). Without an
    override there is nothing the sample could find that aidd's own tests do not render: the
    project's templates are only compiled (nine renders fewer at each start, issue 33)."""
    renderer = PromptRenderer.for_project(paths, cache=CodeCache.for_user(settings.environ))
    if not renderer.overridden_files():
        renderer.compile_all(settings.cli)
        return renderer
    sample = pc.PromptContext(
        aidd_version=__version__,
        project=pc.ProjectInfo(str(paths.root), paths.root.name),
        cli=pc.CliInfo(adapter.name, adapter.display_name),
        kind=PromptKind.CODING,
        paths=pc.PromptPaths.from_project(paths),
        now=pc.TimeInfo.from_datetime(clock.now()),
        directive=settings.prompt or "",
    )
    renderer.compile_all(settings.cli, sample=sample)
    return renderer


def _audits(settings: Settings, paths: ProjectPaths,
            warnings: list[str]) -> tuple[tuple[AuditDefinition, ...], tuple[AuditDefinition, ...]]:
    queue: list[AuditDefinition] = []
    if settings.audit_all:
        queue = list(all_runnable(paths))
        if not queue:
            raise UsageError("--audit-all: no runnable audit definitions found")
    if settings.audit:
        queue.extend(resolve_audits(settings.audit, paths))
    queue = list({a.name: a for a in queue}.values())
    post: list[AuditDefinition] = []
    if settings.audit_on_completion:
        post = list(resolve_audits(settings.audit_on_completion, paths))
        if queue:
            warnings.append("--audit-on-completion is ignored in an audit run")
            post = []
    return tuple(queue), tuple(post)


def _find_binary(name: str, environ: Any) -> str:
    path = shutil.which(name, path=environ.get("PATH"))
    if path is None:
        raise AgentCliError(f"agent binary '{name}' not found on PATH (--cli); install it first")
    return path


def _check_project_dir(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise UsageError(f"--project-dir {root} exists and is not a directory")
    if root.is_dir():
        if not os.access(root, os.R_OK | os.W_OK | os.X_OK):
            raise NotFoundError(f"--project-dir {root} is not readable and writable")
        return
    parent = root.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise NotFoundError(f"--project-dir {root} cannot be created ({parent} is not writable)")


def _check_spec(settings: Settings, paths: ProjectPaths, origin: Origin, *,
                audit_run: bool) -> list[str]:
    """Refuses a spec that is needed but missing or unusable; a given spec is never ignored
    in silence (issue 28): an audit run says it does not use it, and a project whose
    app_spec.txt says something else is refused rather than run on the other text."""
    spec = settings.spec
    if spec is not None:
        _check_spec_file(spec)
        if audit_run:
            return ["--spec is not used by an audit run: the audits read .automaker/app_spec.txt"]
        if origin is Origin.EXISTING and spec_differs(spec, paths):
            raise UsageError(f"--spec {spec} differs from the project's .automaker/app_spec.txt, "
                             "which a run of an existing project does not replace: edit that "
                             "file, or remove it to start from --spec")
        return []
    if not audit_run and origin is Origin.NEW and not paths.app_spec.is_file():
        raise UsageError(
            "--spec is needed: the project is new and has no .automaker/app_spec.txt"
        )
    return []


def _check_spec_file(spec: Path) -> None:
    if not spec.exists():
        raise NotFoundError(f"--spec {spec} does not exist")
    if not spec.is_file():
        raise NotFoundError(f"--spec {spec} is not a regular file")
    if not os.access(spec, os.R_OK):
        raise NotFoundError(f"--spec {spec} is not readable")
    if spec.stat().st_size > SPEC_LIMIT:
        raise UsageError(f"--spec {spec} is larger than {SPEC_LIMIT >> 20} MiB")


def _claim_project(paths: ProjectPaths, started: datetime, settings: Settings,
                   mark: str) -> ProjectLock:
    try:
        paths.root.mkdir(parents=True, exist_ok=True)  # the user's own choice of directory
        make_dirs(paths.root, paths.automaker)
    except UnsafePathError as exc:
        raise NotFoundError(str(exc)) from None
    except OSError as exc:
        raise NotFoundError(f"--project-dir {paths.root} cannot be created ({exc})") from None
    lock = ProjectLock(paths.root, paths.lock, procfs)
    try:
        lock.acquire(started, redact_argv(settings.argv),  # no secret URL in the lock
                     {"agent_mark": mark, "keep_children": settings.keep_children})
    except UnsafePathError as exc:
        raise NotFoundError(f"cannot use the lock file {exc}") from None
    except OSError as exc:
        raise NotFoundError(f"cannot write the lock {paths.lock} ({exc.strerror or exc})") from None
    return lock


def _kill_orphans(lock: ProjectLock, paths: ProjectPaths, clock: Clock) -> list[str]:
    """The agent tree of an aidd killed with SIGKILL may still run: kill it now (REL-1)."""
    killed = kill_orphans(lock.previous, paths.events, clock, root=paths.root)
    if not killed:
        return []
    names = ", ".join(o.label() for o in killed)
    return [f"killed {len(killed)} processes left running by that aidd's agent: {names}"]
