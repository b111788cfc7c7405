"""Settings: built-ins < user config.yaml < project aidd.yaml < AIDD_* variables < flags (CLI-30).

The only module that reads the process environment for aidd's own settings.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from aidd.errors import UsageError
from aidd.gate.commands import DEFAULT_TIMEOUT_S, GateCommand
from aidd.notify.targets import Target
from aidd.options import BY_NAME, OPTIONS, Kind, Option, OptionValueError, convert


@dataclass(frozen=True)
class Actions:
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


@dataclass(frozen=True)
class ConfigProblem:
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
    quit_on_abort: int
    continue_on_timeout: bool
    keep_children: bool
    trust_project_config: bool
    rate_limit_buffer: int
    rate_limit_fallback: int
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
    no_clean: bool
    extract_structured: bool
    actions: Actions = field(default_factory=Actions)
    config_sources: tuple[str, ...] = ()
    config_problems: tuple[ConfigProblem, ...] = ()  # only when loaded leniently (--doctor)
    argv: tuple[str, ...] = field(default=(), repr=False)  # may hold a secret URL
    environ: Mapping[str, str] = field(default_factory=dict, repr=False)

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
    user = layers.read("user", user_file, lambda: _read_yaml(user_file, allow_project_dir=True))
    if user:
        sources.append(str(user_file))
    env_values = _from_environ(env, cwd, layers)
    project_dir = flags.get("project-dir") or env_values.get("project-dir") or user.get(
        "project-dir"
    ) or cwd
    project_dir = Path(os.path.abspath(cwd / project_dir))  # noqa: PTH100 - keep symlinks as given
    project_file = project_dir / ".automaker" / "aidd.yaml"
    project = layers.read("project", project_file, lambda: _project_layer(
        project_file, project_dir, {**env_values, **flags}, user))
    if project:
        sources.append(str(project_file))
    sources.extend(opt.env for opt in OPTIONS if opt.env in env and opt.name in env_values)
    merged: dict[str, Any] = {opt.name: opt.default for opt in OPTIONS}
    for layer in (user, project, env_values, flags):
        merged.update({k: v for k, v in layer.items() if v is not None})
    merged["project-dir"] = project_dir
    values = {BY_NAME[k].attr: v for k, v in merged.items()}
    return Settings(
        **values,
        actions=actions,
        config_sources=tuple(sources),
        config_problems=tuple(layers.problems),
        argv=argv,
        environ=env,
    )


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


def _project_layer(project_file: Path, project_dir: Path, overridden: Mapping[str, Any],
                   user: dict[str, Any]) -> dict[str, Any]:
    """The project's aidd.yaml, refused where it loosens what the user set (unless trusted)."""
    project = _read_yaml(project_file, allow_project_dir=False, root=project_dir)
    trusted = overridden.get("trust-project-config") or user.get("trust-project-config")
    if project and not trusted:
        _check_project_values(project_file, {k: v for k, v in project.items()
                                             if k not in overridden}, user)
    return project


# The project's aidd.yaml is repository content (README "Security model"): it may tighten these
# limits but not loosen or switch them off, unless the user trusts it (trust-project-config).
_LOOSENING = ("timeout", "idle-timeout", "busy-timeout", "liveness", "max-nudges")
# Budgets and pacing from the user's config: the project may lower them, not raise or drop them.
_BUDGETS = ("max-wall-time", "max-tokens", "max-cost-usd", "daily-max-cost-usd",
            "daily-max-tokens", "pace-at")
CONFIG_LIMIT = 1 << 20  # bytes; a config file is a few lines
# Where aidd reports to is the user's alone (issue 16), trusted project or not.
_USER_ONLY = ("notify", "notify-webhook", "notify-command", "heartbeat-url",
              "heartbeat-interval")


def _check_project_values(path: Path, values: dict[str, Any], user: dict[str, Any]) -> None:
    root = path.parent.parent
    hint = "; set trust-project-config: true in your own config to allow it"
    for name, value in values.items():
        opt = BY_NAME[name]
        if opt.kind is Kind.PATH and not _inside(value, root):
            raise UsageError(f"{path}: key '{name}' names a file outside the project{hint}")
        if name in _LOOSENING:
            _check_project_limit(path, name, value, user, hint)
        if name == "keep-children" and value:
            raise UsageError(f"{path}: key 'keep-children: true' leaves the agent's processes "
                             f"running{hint}")
        if name in _BUDGETS:
            _check_project_budget(path, name, value, user.get(name), hint)
        if name == "gate":
            _check_project_gate(path, value, user.get("gate"), hint)
        if name == "gate-revert-passes" and not value and user.get(name):
            raise UsageError(f"{path}: key 'gate-revert-passes: false' loosens the gate{hint}")


def _check_project_limit(path: Path, name: str, value: Any, user: dict[str, Any],
                         hint: str) -> None:
    limit = user.get(name, BY_NAME[name].default)
    if name == "busy-timeout" and limit is None:  # the user's: as their timeout
        limit = user.get("timeout", BY_NAME["timeout"].default)
    if name == "liveness":  # signals may keep a silent agent alive longer than output does
        if value != limit == "output":
            raise UsageError(f"{path}: key 'liveness: {value}' loosens supervision (in effect: "
                             f"output){hint}")
    elif value == 0 or (limit and value > limit):
        raise UsageError(f"{path}: key '{name}: {value}' loosens supervision (in effect: "
                         f"{limit}){hint}")


def _check_project_budget(path: Path, name: str, value: float, users: float | None,
                          hint: str) -> None:
    if users and (not value or value > users):
        raise UsageError(f"{path}: key '{name}: {value}' loosens your budget (in effect: "
                         f"{users}){hint}")


def _check_project_gate(path: Path, gate: tuple[GateCommand, ...],
                        users: tuple[GateCommand, ...] | None, hint: str) -> None:
    """The project may declare its checks (like its CI does), but not replace the user's own
    nor keep aidd waiting longer than the default on each."""
    if users and gate != users:
        raise UsageError(f"{path}: key 'gate' replaces the gate of your own config{hint}")
    for command in gate:
        if command.timeout_s > DEFAULT_TIMEOUT_S:
            raise UsageError(f"{path}: key 'gate': '{command.name}' timeout {command.timeout_s}s "
                             f"is over the {DEFAULT_TIMEOUT_S}s default{hint}")


def _inside(value: Path, root: Path) -> bool:
    real, top = os.path.realpath(value), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _read_config_text(path: Path, root: Path | None) -> str | None:
    """The file's text, or None when there is none. The project's file is read as project
    content (no FIFO, no link out of the project, capped); the user's own with the cap only."""
    # Imported here: fsio brings `secrets` (~4 ms, -X importtime), which `--help` never needs.
    from aidd.fsio import read_file

    try:
        raw = read_file(root if root is not None else path.parent, path, CONFIG_LIMIT)
        return raw.decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read config file ({exc})") from None


def _read_yaml(path: Path, *, allow_project_dir: bool, root: Path | None = None
               ) -> dict[str, Any]:
    text = _read_config_text(path, root)
    if text is None:
        return {}
    import yaml  # lazy: most runs have no config file, and yaml costs 15 ms to import

    try:
        data = yaml.load(text, Loader=_loader())  # a SafeLoader that also refuses aliases
    except (yaml.YAMLError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else _first_line(exc)
        raise UsageError(f"{path}: not valid YAML ({why})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{path}: config file must be a mapping of option names to values")
    out: dict[str, Any] = {}
    for key, raw in data.items():
        opt = _config_option(path, key, allow_project_dir)
        out[opt.name] = _convert_or_raise(opt, raw, f"{path}: key '{key}'", path.parent)
    return out


def _loader() -> Any:
    """yaml's SafeLoader, refusing aliases: a few lines of anchors and aliases can expand to
    gigabytes (a "billion laughs"), and a config file never needs them (issue 13 item 14)."""
    import yaml

    class _NoAliases(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                raise yaml.YAMLError("aliases (*name) are not allowed in a config file")
            return super().compose_node(parent, index)

    return _NoAliases


def _config_option(path: Path, key: object, allow_project_dir: bool) -> Option:
    name = str(key).replace("_", "-")
    opt = BY_NAME.get(name)
    if opt is None or not opt.configurable:
        raise UsageError(f"{path}: unknown key '{key}'")
    if name in ("project-dir", "trust-project-config") and not allow_project_dir:
        raise UsageError(f"{path}: key '{key}' is not allowed in a project config file")
    if name in _USER_ONLY and not allow_project_dir:
        raise UsageError(f"{path}: key '{key}' is not allowed in a project config file (it "
                         "could send your data anywhere or run a command); set it in your own")
    return opt


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
    return {opt.name: _convert_or_raise(opt, raw, opt.env, cwd)}


def _convert_or_raise(opt: Option, raw: Any, where: str, base: Path) -> Any:
    try:
        return convert(opt, raw, base)
    except OptionValueError as exc:
        raise UsageError(f"{where}: {exc}") from None


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
