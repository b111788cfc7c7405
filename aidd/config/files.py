"""The config files: the user's `config.yaml` and the project's `.automaker/aidd.yaml`, read
as YAML without aliases and checked key by key; the project's narrowed (it is repository
content: README "Security model"), and a command it declares held until the user approved the
file (issue 27 item 8)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aidd.errors import UsageError
from aidd.gate.commands import DEFAULT_TIMEOUT_S, GateCommand
from aidd.options import BY_NAME, Kind, Option, OptionValueError, convert
from aidd.project.approvals import is_approved


def project_layer(project_file: Path, project_dir: Path, overridden: Mapping[str, Any],
                   user: dict[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """The project's aidd.yaml, refused where it loosens what the user set (unless trusted).
    A command it declares (the gate) is held, under `HELD`, until the user approved this very
    file (`aidd --allow`) or trusts project configs."""
    text = _read_config_text(project_file, project_dir)
    if text is None:
        return {}
    project = _parse_yaml(project_file, text, allow_project_dir=False)
    trusted = overridden.get("trust-project-config") or user.get("trust-project-config")
    if project and not trusted:
        _check_project_values(project_file, {k: v for k, v in project.items()
                                             if k not in overridden}, user)
        commands = [k for k in _RUNS_COMMANDS if project.get(k) and k not in overridden
                    and project[k] != user.get(k)]
        if commands and not is_approved(environ, project_file, text.encode()):
            project[HELD] = {k: project.pop(k) for k in commands}
    return project


# The project's aidd.yaml is repository content (README "Security model"): it may tighten these
# limits but not loosen or switch them off, unless the user trusts it (trust-project-config).
_LOOSENING = ("timeout", "idle-timeout", "busy-timeout", "liveness", "rate-limit-max-sleep",
              "max-nudges", "max-attempts-per-feature")
# Budgets and pacing from the user's config: the project may lower them, not raise or drop them.
_BUDGETS = ("max-wall-time", "max-tokens", "max-cost-usd", "daily-max-cost-usd",
            "daily-max-tokens", "pace-at")
CONFIG_LIMIT = 1 << 20  # bytes; a config file is a few lines
# Keys whose value aidd runs as a command: from the project's file only once the user approved
# that file (aidd --allow), as direnv's `allow` works (issue 27 item 8).
_RUNS_COMMANDS = ("gate",)
HELD = "\0held"  # the project layer's commands waiting for approval (no option has this name)
# Where aidd reports to is the user's alone (issue 16), trusted project or not; so is what its
# exit code tells a scheduler (issue 28: a project must not hide a failed night).
_USER_ONLY = ("notify", "notify-webhook", "notify-command", "heartbeat-url",
              "heartbeat-interval", "strict-exit")


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
        if name == "parallel" and value > user.get(name, 1):  # N agents cost N times an hour
            raise UsageError(f"{path}: key 'parallel: {value}' runs more agents at once than "
                             f"you set{hint}")
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


def read_yaml(path: Path, *, allow_project_dir: bool, root: Path | None = None
               ) -> dict[str, Any]:
    text = _read_config_text(path, root)
    return {} if text is None else _parse_yaml(path, text, allow_project_dir=allow_project_dir)


def project_gate(path: Path, content: bytes) -> tuple[GateCommand, ...]:
    """The gate the project's aidd.yaml declares (`aidd --allow` shows what it approves);
    UsageError for a file a run would refuse to read."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: cannot read config file ({exc})") from None
    gate: tuple[GateCommand, ...] = _parse_yaml(path, text, allow_project_dir=False).get(
        "gate", ())
    return gate


def _parse_yaml(path: Path, text: str, *, allow_project_dir: bool) -> dict[str, Any]:
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
        out[opt.name] = convert_or_raise(opt, raw, f"{path}: key '{key}'", path.parent)
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
                         "decides where aidd reports to, and what); set it in your own")
    return opt


def convert_or_raise(opt: Option, raw: Any, where: str, base: Path) -> Any:
    try:
        return convert(opt, raw, base)
    except OptionValueError as exc:
        raise UsageError(f"{where}: {exc}") from None


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
