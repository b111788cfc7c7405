"""Settings: built-ins < user config.yaml < project aidd.yaml < AIDD_* variables < flags (CLI-30).

The only module that reads the process environment for aidd's own settings.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aidd.errors import UsageError
from aidd.options import BY_NAME, OPTIONS, Option, OptionValueError, convert
from aidd.session.idle import IdlePolicy


@dataclass(frozen=True)
class Actions:
    """One-shot actions and `--json`: flags only, never configured (CLI-32)."""

    extract_batch: bool = False
    check_features: bool = False
    status: bool = False
    json: bool = False
    stop: bool = False


@dataclass(frozen=True)
class Settings:
    project_dir: Path
    spec: Path | None = None
    cli: str = "opencode"
    model: str | None = None
    init_model: str | None = None
    code_model: str | None = None
    audit_model: str | None = None
    prompt: str | None = None
    todo: bool = False
    validate: bool = False
    in_progress: bool = False
    stop_when_done: bool = True
    audit: tuple[str, ...] = ()
    audit_all: bool = False
    audit_on_completion: tuple[str, ...] = ()
    code_after_audit: bool = False
    filter_by: str | None = None
    filter: str | None = None
    milestone: str | None = None
    feature: str | None = None
    max_iterations: int | None = None
    timeout: int = 3600
    idle_timeout: int = 900
    idle_nudge_timeout: int = 300
    quit_on_abort: int = 0
    continue_on_timeout: bool = False
    keep_children: bool = False
    rate_limit_buffer: int = 60
    rate_limit_fallback: int = 300
    no_clean: bool = False
    extract_structured: bool = False
    actions: Actions = field(default_factory=Actions)
    config_sources: tuple[str, ...] = ()
    argv: tuple[str, ...] = ()
    environ: Mapping[str, str] = field(default_factory=dict, repr=False)

    @property
    def audit_run(self) -> bool:
        return bool(self.audit) or self.audit_all

    @property
    def nudge_enabled(self) -> bool:
        """The one rule, the idle machine's own (SUP-22: no idle supervision, no nudge)."""
        return IdlePolicy(self.idle_nudge_timeout, self.idle_timeout).nudge_enabled

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
) -> Settings:
    """`flags` maps option names to values given on the command line (already converted)."""
    env = dict(os.environ if environ is None else environ)
    cwd = cwd or Path.cwd()
    sources: list[str] = []
    user_file = xdg_config_home(env) / "aidd" / "config.yaml"
    user = _read_yaml(user_file, allow_project_dir=True)
    if user:
        sources.append(str(user_file))
    env_values = _from_environ(env, cwd)
    project_dir = flags.get("project-dir") or env_values.get("project-dir") or user.get(
        "project-dir"
    ) or cwd
    project_dir = Path(os.path.abspath(cwd / project_dir))  # noqa: PTH100 - keep symlinks as given
    project_file = project_dir / ".automaker" / "aidd.yaml"
    project = _read_yaml(project_file, allow_project_dir=False)
    if project:
        sources.append(str(project_file))
    sources.extend(opt.env for opt in OPTIONS if opt.env in env and opt.name in env_values)
    merged: dict[str, Any] = {}
    for layer in (user, project, env_values, flags):
        merged.update({k: v for k, v in layer.items() if v is not None})
    merged["project-dir"] = project_dir
    values = {BY_NAME[k].attr: v for k, v in merged.items()}
    return Settings(
        **values,
        actions=actions,
        config_sources=tuple(sources),
        argv=argv,
        environ=env,
    )


def _read_yaml(path: Path, *, allow_project_dir: bool) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read config file ({exc})") from None
    import yaml  # lazy: most runs have no config file, and yaml costs 15 ms to import

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: not valid YAML ({_first_line(exc)})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{path}: config file must be a mapping of option names to values")
    out: dict[str, Any] = {}
    for key, raw in data.items():
        opt = _config_option(path, key, allow_project_dir)
        out[opt.name] = _convert_or_raise(opt, raw, f"{path}: key '{key}'", path.parent)
    return out


def _config_option(path: Path, key: object, allow_project_dir: bool) -> Option:
    name = str(key).replace("_", "-")
    opt = BY_NAME.get(name)
    if opt is None or not opt.configurable:
        raise UsageError(f"{path}: unknown key '{key}'")
    if name == "project-dir" and not allow_project_dir:
        raise UsageError(f"{path}: key '{key}' is not allowed in a project config file")
    return opt


def _from_environ(env: Mapping[str, str], cwd: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for opt in OPTIONS:
        if opt.configurable and opt.env in env:
            raw = env[opt.env]
            if opt.name == "prompt" and not raw:
                continue
            out[opt.name] = _convert_or_raise(opt, raw, opt.env, cwd)
    return out


def _convert_or_raise(opt: Option, raw: Any, where: str, base: Path) -> Any:
    try:
        return convert(opt, raw, base)
    except OptionValueError as exc:
        raise UsageError(f"{where}: {exc}") from None


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
