"""The one core entry: check the flags, then run one job, a one-shot action (--status,
--stop, --check-features, --extract-batch) or the loop (CLI-20).

Everything before the run's preflight takes the project only reads it: a run that fails a
check leaves no trace.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from aidd.clock import Clock, SystemClock
from aidd.config import Settings
from aidd.console import aidd_command, print_err, print_out, shell_line
from aidd.errors import ExitCode, LockHeldError, NotFoundError, UsageError, ValidationError
from aidd.fsio import UnsafePathError
from aidd.options import OPTIONS
from aidd.project.paths import ProjectPaths, check_layout

if TYPE_CHECKING:
    from aidd.project.filters import FeatureFilter

# The flags of the flag table each one-shot action uses; any other given on the command line is
# said to be ignored. --doctor checks the whole set-up and --show-config shows every setting.
ALL = frozenset(opt.name for opt in OPTIONS)
_LOOKS = frozenset({"project-dir", "color"})
_TAKES: dict[str, frozenset[str]] = {
    "status": _LOOKS | {"filter-by", "filter", "milestone", "feature"},
    **{name: _LOOKS for name in ("extract_batch", "check_features", "stop", "checkpoints",
                                 "rollback", "report", "allow", "migrate_features")},
}
_ACTION_ORDER = ("extract_batch", "check_features", "status", "stop", "checkpoints", "rollback",
                 "report", "doctor", "allow", "migrate_features", "show_config")


def run(settings: Settings) -> int:
    paths = ProjectPaths(settings.project_dir)
    _check_flag_combinations(settings)
    _check_platform()
    action = _chosen_action(settings)
    feature_filter = _build_filter(paths, settings) if _needs_filter(settings, action) else None
    clock = SystemClock()  # the one clock of this process: every time read and wait uses it
    try:
        if action is not None:
            if action in ("stop", "extract_batch", "rollback", "migrate_features"):  # they write
                check_layout(paths)
            return _one_shot(action, settings, paths, feature_filter, clock)
        _confirm_unattended(settings, paths)
        # Imported here: a one-shot such as --status starts faster without the run's modules.
        from aidd.run.preflight import prepare_run
        from aidd.run.supervisor import Supervisor

        plan = prepare_run(settings, paths, feature_filter, clock)
    except UnsafePathError as exc:  # a planted link, hard link or FIFO (issue 13)
        raise NotFoundError(f"refused: {exc}") from None
    return Supervisor(plan, clock).run()


def _confirm_unattended(settings: Settings, paths: ProjectPaths) -> None:
    """No accidental night (issue 28): `aidd` typed without --project-dir in a directory that
    holds files but was never an aidd project would let an agent loose on it with full
    permissions. At a terminal, say so and ask once; --yes, an explicit --project-dir or no
    terminal keep the bash original's behaviour."""
    from aidd.project.detect import has_existing_code

    if settings.actions.yes or settings.from_flag("project-dir"):
        return
    if paths.automaker.exists() or not has_existing_code(paths.root) or not sys.stdin.isatty():
        return
    print_out(f"aidd is about to run {settings.cli} unattended, in a loop, with full permissions "
              f"over {paths.root} (it holds files and was never an aidd project). Go on? [y/N] ")
    try:
        answer = sys.stdin.readline().strip().lower()
    except (OSError, ValueError):
        answer = ""
    if answer not in ("y", "yes"):
        raise UsageError(f"not started in {paths.root}: name the project with --project-dir "
                         "(or pass --yes) to start without this question")


def _check_flag_combinations(settings: Settings) -> None:
    actions = settings.actions
    if actions.json and not (actions.status or actions.checkpoints or actions.report
                             or actions.doctor or actions.show_config):
        raise UsageError("--json needs --status, --checkpoints, --report, --doctor or "
                         "--show-config")
    if actions.offline and not actions.doctor:
        raise UsageError("--offline needs --doctor")
    _check_report_flags(settings)
    if (settings.filter_by is None) != (settings.filter is None):
        raise UsageError("--filter-by and --filter must be given together")
    if settings.code_after_audit and not (
        settings.audit_run or settings.audit_on_completion
    ):
        raise UsageError("--code-after-audit needs --audit, --audit-all or --audit-on-completion")


def _check_report_flags(settings: Settings) -> None:
    actions = settings.actions
    for name in ("since", "html"):
        if getattr(actions, name) is not None and not actions.report:
            raise UsageError(f"--{name} needs --report")
    if actions.json and actions.html is not None:
        raise UsageError("--report takes --json or --html FILE, not both")
    if actions.report and actions.since is not None:
        from aidd.reports.morning.window import check_since

        check_since(actions.since, SystemClock().now())


def _check_platform() -> None:
    if os.name != "posix" or not hasattr(os, "openpty"):
        raise ValidationError(f"unsupported platform {sys.platform!r}: aidd needs a POSIX pty")


def _needs_filter(settings: Settings, one_shot: str | None) -> bool:
    if one_shot not in (None, "status"):
        return False
    return any((settings.filter_by, settings.milestone, settings.feature))


def _build_filter(paths: ProjectPaths, settings: Settings) -> FeatureFilter:
    """The field filter, milestone and feature focus, resolved once, before anything runs."""
    from aidd.project import filters  # not for a one-shot without filters: it starts sooner

    return filters.FeatureFilter(
        field=filters.parse_field_filter(settings.filter_by, settings.filter),
        milestone=filters.load_milestone(paths, settings.milestone) if settings.milestone else None,
        focus=filters.resolve_feature(paths, settings.feature) if settings.feature else None,
    )


def _chosen_action(settings: Settings) -> str | None:
    chosen = [name for name in _ACTION_ORDER if getattr(settings.actions, name)]
    if not chosen:
        return None
    if len(chosen) > 1:
        ignored = ", ".join("--" + n.replace("_", "-") for n in chosen[1:])
        print_err(f"aidd: ignoring {ignored} (only --{chosen[0].replace('_', '-')} runs)\n")
    unused = [f"--{opt.name}" for opt in OPTIONS if settings.from_flag(opt.name)
              and opt.name not in _TAKES.get(chosen[0], ALL)]
    if unused:  # no flag ignored in silence (issue 28)
        print_err(f"aidd: ignoring {', '.join(unused)}: --{chosen[0].replace('_', '-')} does "
                  "not use it (a run's setting)\n" if len(unused) == 1 else
                  f"aidd: ignoring {', '.join(unused)}: --{chosen[0].replace('_', '-')} does "
                  "not use them (a run's settings)\n")
    return chosen[0]


def _one_shot(action: str, settings: Settings, paths: ProjectPaths,
              feature_filter: FeatureFilter | None, clock: Clock) -> int:
    """Each action imports only its own modules, so a one-shot starts fast."""
    if action in ("stop", "doctor", "show_config"):  # none needs the project directory
        return {"stop": _stop, "doctor": _doctor, "show_config": _show_config}[action](
            paths, settings, clock)
    if not paths.root.is_dir():
        raise NotFoundError(f"project directory {paths.root} does not exist")
    if action in ("rollback", "report", "allow", "checkpoints", "extract_batch",
                  "migrate_features"):
        return {"rollback": _rollback, "report": _report, "allow": _allow,
                "checkpoints": _checkpoints, "extract_batch": _extract_batch,
                "migrate_features": _migrate_features}[action](
            paths, settings, clock)
    from aidd.project.features import gc_paused

    with gc_paused():  # their imports and every feature file: a collection finds nothing there
        return _feature_report(action, settings, paths, feature_filter, clock)


def _feature_report(action: str, settings: Settings, paths: ProjectPaths,
                    feature_filter: FeatureFilter | None, clock: Clock) -> int:
    """--check-features or --status."""
    if action == "check_features":
        from aidd.reports.featurecheck import check_features

        text, code = check_features(paths)
        print_out(text)
        return int(code)
    from aidd.reports.status import print_status

    return int(print_status(paths, feature_filter, as_json=settings.actions.json, clock=clock))


def _show_config(paths: ProjectPaths, settings: Settings, clock: Clock) -> int:
    from aidd.config.show import show_config

    print_out(show_config(settings, as_json=settings.actions.json))
    return int(ExitCode.SUCCESS)


def _checkpoints(paths: ProjectPaths, settings: Settings, clock: Clock) -> int:
    from aidd.reports.checkpoints import print_checkpoints

    return print_checkpoints(paths, settings.environ, as_json=settings.actions.json)


def _extract_batch(paths: ProjectPaths, settings: Settings, clock: Clock) -> int:
    from aidd.logs.extract import extract_batch

    return int(extract_batch(paths.iterations))


def _running_pid(paths: ProjectPaths) -> int | None:
    """The pid of the aidd running on this project now, if any (its lock record)."""
    from aidd.project.lockfile import lock_holder
    from aidd.session import procfs

    holder = lock_holder(paths.root, paths.lock, procfs)
    return holder.pid if holder.alive else None


def _stop(paths: ProjectPaths, settings: Settings, clock: Clock) -> int:
    from aidd.project.stop import request_stop

    if not paths.root.is_dir():
        raise NotFoundError(f"project directory {paths.root} does not exist")
    request_stop(paths.root, paths.stop, clock.now())
    pid = _running_pid(paths)
    if pid is not None:
        print_out(f"stop requested: aidd (pid {pid}) will stop after its current agent run\n")
    else:
        print_out(f"stop requested ({paths.rel(paths.stop)}); no aidd is running on this "
                  "project now\n")
    return int(ExitCode.SUCCESS)


def _doctor(paths: ProjectPaths, settings: Settings, clock: Clock) -> int:
    """A missing project directory is one of the doctor's findings, not an error."""
    from aidd.doctor.show import print_doctor

    return print_doctor(settings, paths, clock)


def _report(paths: ProjectPaths, settings: Settings, clock: Clock) -> int:
    from aidd.reports.morning.show import print_report

    html = settings.actions.html
    return print_report(paths, settings.environ, clock, since=settings.actions.since,
                        as_json=settings.actions.json, html=Path(html) if html else None)


def _allow(paths: ProjectPaths, settings: Settings, clock: Clock) -> int:
    """Approve the project's aidd.yaml as it is now (issue 27 item 8): the bytes approved are
    the bytes read here, once, and the next run runs its gate only while they are unchanged."""
    from aidd.config.files import CONFIG_LIMIT, project_gate
    from aidd.fsio import read_file
    from aidd.project.approvals import approve

    try:
        content = read_file(paths.root, paths.config, CONFIG_LIMIT)
    except FileNotFoundError:
        raise NotFoundError(f"--allow: {paths.config} does not exist") from None
    except OSError as exc:
        raise NotFoundError(f"--allow: {paths.config}: {exc}") from None
    gate = project_gate(paths.config, content)  # a file aidd would refuse is not approved
    approve(settings.environ, paths.config, content)
    runs = "; ".join(shell_line(command.run) for command in gate) or "nothing (it declares no gate)"
    print_out(f"approved {paths.config} as it is now; from it aidd runs: {runs}\n")
    return int(ExitCode.SUCCESS)


def _rollback(paths: ProjectPaths, settings: Settings, clock: Clock) -> int:
    """Refused while an aidd runs here: it would write over the agent's work in progress."""
    from aidd.events import EventLog, make_run_id
    from aidd.project.checkpointnames import run_of
    from aidd.project.checkpoints import CheckpointError, CheckpointStore
    from aidd.project.rollback import roll_back

    pid = _running_pid(paths)
    if pid is not None:
        raise LockHeldError(f"an aidd (pid {pid}) is running on {paths.root}; stop it first "
                            f"({aidd_command(paths.root, '--stop')}), then roll back")
    assert settings.actions.rollback is not None
    store = CheckpointStore(paths.root, make_run_id(clock.now(), os.getpid()), settings.environ)
    try:
        done = roll_back(store, settings.actions.rollback)
    except CheckpointError as exc:
        raise NotFoundError(f"--rollback: {exc}") from None
    events = EventLog(paths.events, store.run_id, root=paths.root, clock=clock)
    events.emit("rollback", target=done.target, saved=done.saved, restored=list(done.restored),
                removed=list(done.removed))
    events.close()
    run = run_of(done.target)
    lines = [f"rolled back to {done.target} (run {run})"]
    lines += [f"  restored {path}" for path in done.restored]
    lines += [f"  removed  {path}" for path in done.removed]
    lines.append(f"to undo: {aidd_command(paths.root, '--rollback', done.saved)}")
    print_out("\n".join(lines) + "\n")
    return int(ExitCode.SUCCESS)


def _migrate_features(paths: ProjectPaths, settings: Settings, clock: Clock) -> int:
    """Refused while an aidd runs here: its agent may be writing the same files."""
    from aidd.events import make_run_id
    from aidd.project.checkpoints import CheckpointError, CheckpointStore
    from aidd.project.migrate import migrate_features

    pid = _running_pid(paths)
    if pid is not None:
        raise LockHeldError(f"an aidd (pid {pid}) is running on {paths.root}; stop it first")
    store = CheckpointStore(paths.root, make_run_id(clock.now(), os.getpid()), settings.environ)
    try:
        done = migrate_features(paths, store)
    except CheckpointError as exc:  # no checkpoint, no change
        raise NotFoundError(f"--migrate-features: {exc}") from None
    if done.saved is None:
        print_out("no feature file says passes: true with in_progress or completed: "
                  "nothing to migrate\n")
        return int(ExitCode.SUCCESS)
    lines = [f"  {m.name}: status {m.old_status} -> verified" for m in done.changed]
    lines.append(f"migrated {len(done.changed)} feature file(s); to undo: "
                 f"{aidd_command(paths.root, '--rollback', done.saved)}")
    print_out("\n".join(lines) + "\n")
    return int(ExitCode.SUCCESS)
