"""Settings: built-ins < user config.yaml < project aidd.yaml < AIDD_* variables < flags (CLI-30).

The only module that reads the process environment for aidd's own settings.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from aidd.config.files import HELD, convert_or_raise, project_layer, read_yaml
from aidd.errors import UsageError
from aidd.gate.commands import GateCommand
from aidd.notify.targets import Target
from aidd.options import BY_NAME, OPTIONS, Option


class Actions(NamedTuple):
    """One-shot actions and `--json`: flags only, never configured (CLI-32)."""

    extract_batch: bool = False
    check_features: bool = False
    status: bool = False
    json: bool = False
    stop: bool = False
    checkpoints: bool = False
    rollback: str | None = None  # the checkpoint to roll back to
    report: bool = False
    since: str | None = None  # --since WHEN, with --report
    html: str | None = None  # --html FILE, with --report
    doctor: bool = False
    offline: bool = False  # --offline, with --doctor: no check that needs the network
    allow: bool = False  # --allow: approve the project's aidd.yaml as it is now
    migrate_features: bool = False  # --migrate-features: earlier aidd's done to `verified`
    show_config: bool = False  # --show-config: each effective setting and where it came from
    yes: bool = False  # --yes: start a run without asking (see app._confirm_unattended)


# The flags of `Actions`, as --help shows them (cli).
ACTION_FLAGS = (
    ("extract-batch", "write iterations/NNN.json for every log, then exit"),
    ("check-features", "validate every feature.json, then exit"),
    ("status", "print the status report (filters apply), then exit"),
    ("json", "with --status, --checkpoints, --report, --doctor or --show-config: print JSON "
             "instead of text"),
    ("stop", "ask a running aidd to stop after its current agent run"),
    ("checkpoints", "list this project's checkpoints (with --json: as JSON), then exit"),
    ("report", "print the morning report: runs, attempts, features passed, changes, cost, "
               "pauses, gate, what to look at first (--since, --json, --html), then exit"),
    ("doctor", "check the set-up, one line per check (the CLI, its login, nesting, root, disk, "
               "git, project, lock, config, copy lists, gate, liveness, endpoints), then exit"),
    ("allow", "approve the project's .automaker/aidd.yaml as it is now: the gate it declares "
              "runs from then on (an edited file needs approving again), then exit"),
    ("migrate-features", "rewrite features an earlier aidd finished (passes: true with status "
                         "in_progress or completed) to AutoMaker's done, verified, after a "
                         "checkpoint, printing each, then exit"),
    ("show-config", "print each effective setting and where it came from (built-in, your "
                    "config, the project's, a variable, a flag; with --json: as JSON), then exit"),
    ("yes", "start without asking, also where aidd would ask first (no --project-dir given, "
            "a directory with files but no .automaker/, a terminal)"),
    ("offline", "with --doctor: skip the checks that need the network (the login prompt, the "
                "notification and heartbeat endpoints)"),
)
ROLLBACK_HELP = ("restore the project to checkpoint NNN, NNN-prekill, NNN-end or "
                 "before-rollback (the present state is checkpointed first), then exit")
REPORT_VALUES = (
    ("since", "WHEN", "with --report: from a time (2026-11-24T22:00, 22:00), a duration back "
                      "(12h, 90m) or last-run [default: last-run]"),
    ("html", "FILE", "with --report: write it as one self-contained HTML page with charts"),
)


class ConfigProblem(NamedTuple):
    """A config layer's error that `load_settings(lenient=True)` (the doctor's) set aside
    instead of raising: that layer, or that variable, was left out."""

    layer: str  # "user", "project" or "environment"
    source: str  # the file, or the variable
    message: str


@dataclass(frozen=True)
class Settings:
    """One field per option of the flag table (options.py), which alone holds the defaults:
    `load_settings` starts from them, so no default is written twice."""

    project_dir: Path
    spec: Path | None
    cli: str
    model: str | None
    init_model: str | None
    code_model: str | None
    audit_model: str | None
    parallel: int  # agents at once on the project (issue 29); 1: one, as before
    worktree_dir: Path | None  # None: under the user's data directory
    prompt: str | None
    todo: bool
    validate: bool
    in_progress: bool
    stop_when_done: bool
    audit: tuple[str, ...]
    audit_all: bool
    audit_on_completion: tuple[str, ...]
    code_after_audit: bool
    filter_by: str | None
    filter: str | None
    milestone: str | None
    feature: str | None
    max_iterations: int | None
    timeout: int
    idle_timeout: int
    idle_nudge_timeout: int
    max_nudges: int  # 0: no cap (issue 28)
    liveness: str  # "signals" or "output" (issue 17)
    busy_timeout: int | None  # None: as `timeout`
    max_attempts_per_feature: int  # 0: never set a feature aside (issue 32)
    quit_on_abort: int
    continue_on_timeout: bool
    keep_children: bool
    trust_project_config: bool
    rate_limit_buffer: int
    rate_limit_fallback: int
    rate_limit_max_sleep: int  # seconds; caps the rate-limit sleep and the pacing pause
    max_wall_time: int | None  # seconds; None or 0: no budget (likewise below)
    max_tokens: int | None
    max_cost_usd: float | None
    daily_max_cost_usd: float | None
    daily_max_tokens: int | None
    pace_at: int | None  # percent of a quota window; None or 0: no pacing
    no_checkpoints: bool
    checkpoint_keep_runs: int
    gate: tuple[GateCommand, ...]
    gate_revert_passes: bool
    notify: tuple[Target, ...]
    notify_webhook: tuple[Target, ...]
    notify_command: tuple[Target, ...]
    heartbeat_url: str | None = field(repr=False)  # its path is the secret
    heartbeat_interval: int
    strict_exit: bool  # a failed health verdict exits RUN_FAILED instead of 0 (issue 28)
    no_clean: bool
    extract_structured: bool
    color: str  # auto, always or never (with NO_COLOR honoured by auto)
    console: str  # bash or compact (issue 30)
    actions: Actions = field(default_factory=Actions)
    config_sources: tuple[str, ...] = ()
    config_problems: tuple[ConfigProblem, ...] = ()  # only when loaded leniently (--doctor)
    # The project's aidd.yaml declares this gate, but the user has not approved that file yet.
    gate_unapproved: tuple[GateCommand, ...] = ()
    origins: tuple[tuple[str, str], ...] = ()  # option name, where its value came from
    argv: tuple[str, ...] = field(default=(), repr=False)  # may hold a secret URL
    environ: Mapping[str, str] = field(default_factory=dict, repr=False)

    def from_flag(self, name: str) -> bool:
        """The option `name` was given on the command line."""
        return dict(self.origins).get(name) == f"flag --{name}"

    def colored(self, terminal: bool) -> bool:
        """Colour on a console that is (or is not) a terminal: --color, and NO_COLOR
        (no-color.org: set and not empty) for `auto`."""
        return color_wanted(self.color, terminal, self.environ)

    @property
    def busy_timeout_s(self) -> int:
        """How long busy silence counts as life; 0: only the wall clock bounds it."""
        return self.timeout if self.busy_timeout is None else self.busy_timeout

    @property
    def audit_run(self) -> bool:
        return bool(self.audit) or self.audit_all

    @property
    def notify_targets(self) -> tuple[Target, ...]:
        """`notify:` and the targets `--notify-webhook` and `--notify-command` add."""
        return self.notify + self.notify_webhook + self.notify_command

    @property
    def aidd_home(self) -> Path | None:
        home = self.environ.get("AIDD_HOME")
        return Path(home).expanduser() if home else None

    @property
    def home(self) -> Path:
        return Path(self.environ.get("HOME") or Path.home())

    @property
    def xdg_config_home(self) -> Path:
        return xdg_config_home(self.environ)


def color_wanted(mode: str, terminal: bool, environ: Mapping[str, str] | None = None) -> bool:
    """`--color auto|always|never`; `auto` colours a terminal unless NO_COLOR is set (also the
    rule for `aidd: error:` lines, which may come before any setting was read)."""
    if mode != "auto":
        return mode == "always"
    return terminal and not (os.environ if environ is None else environ).get("NO_COLOR")


def xdg_config_home(environ: Mapping[str, str]) -> Path:
    value = environ.get("XDG_CONFIG_HOME")
    if value:
        return Path(value)
    return Path(environ.get("HOME") or Path.home()) / ".config"


def load_settings(
    flags: Mapping[str, Any],
    actions: Actions,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    argv: tuple[str, ...] = (),
    *,
    lenient: bool = False,
) -> Settings:
    """`flags` maps option names to values given on the command line (already converted).
    `lenient` (the doctor's): a config file or variable in error is left out and recorded in
    `config_problems`, instead of raising UsageError."""
    env = dict(os.environ if environ is None else environ)
    cwd = cwd or Path.cwd()
    layers = _Layers(lenient)
    sources: list[str] = []
    user_file = xdg_config_home(env) / "aidd" / "config.yaml"
    user = layers.read("user", user_file, lambda: read_yaml(user_file, allow_project_dir=True))
    if user:
        sources.append(str(user_file))
    env_values = _from_environ(env, cwd, layers)
    project_dir = flags.get("project-dir") or env_values.get("project-dir") or user.get(
        "project-dir"
    ) or cwd
    project_dir = Path(os.path.abspath(cwd / project_dir))  # noqa: PTH100 - keep symlinks as given
    project_file = project_dir / ".automaker" / "aidd.yaml"
    project = layers.read("project", project_file, lambda: project_layer(
        project_file, project_dir, {**env_values, **flags}, user, env))
    held = project.pop(HELD, {})
    if project or held:
        sources.append(str(project_file))
    sources.extend(opt.env for opt in OPTIONS if opt.env in env and opt.name in env_values)
    merged: dict[str, Any] = {opt.name: opt.default for opt in OPTIONS}
    origins = dict.fromkeys(merged, "built-in")
    for layer, origin in ((user, f"user config {user_file}"),
                          (project, f"project config {project_file}"),
                          (env_values, "variable"), (flags, "flag")):
        given = {k: v for k, v in layer.items() if v is not None}
        merged.update(given)
        origins.update({k: _origin(origin, BY_NAME[k]) for k in given})
    merged["project-dir"] = project_dir
    values = {BY_NAME[k].attr: v for k, v in merged.items()}
    return Settings(
        **values,
        actions=actions,
        config_sources=tuple(sources),
        config_problems=tuple(layers.problems),
        gate_unapproved=held.get("gate", ()),
        origins=tuple(origins.items()),
        argv=argv,
        environ=env,
    )


def _origin(layer: str, opt: Option) -> str:
    """Where a setting came from, as `--show-config` says it."""
    return {"variable": f"variable {opt.env}", "flag": f"flag {opt.flag}"}.get(layer, layer)


class _Layers:
    """Reads config layers: strictly (an error raises), or leniently (it is recorded)."""

    def __init__(self, lenient: bool) -> None:
        self.lenient = lenient
        self.problems: list[ConfigProblem] = []

    def read(self, layer: str, source: Path | str,
             read: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            return read()
        except UsageError as exc:
            if not self.lenient:
                raise
            self.problems.append(ConfigProblem(layer, str(source), exc.message))
            return {}


def _from_environ(env: Mapping[str, str], cwd: Path, layers: _Layers) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for opt in OPTIONS:
        if opt.configurable and opt.env in env:
            raw = env[opt.env]
            if opt.name == "prompt" and not raw:
                continue
            out.update(layers.read("environment", opt.env, partial(_variable, opt, raw, cwd)))
    return out


def _variable(opt: Option, raw: str, cwd: Path) -> dict[str, Any]:
    return {opt.name: convert_or_raise(opt, raw, opt.env, cwd)}
