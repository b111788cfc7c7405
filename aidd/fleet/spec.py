"""The fleet file (`fleet.yaml`): projects, their credential pools and the pools' caps, read
into frozen values; every mistake is one line naming the file and the key (exit 2).

    name: nightly                # optional: the file's name without .yaml
    pools: {claude-main: 2}      # a credential pool and how many agents may use it at once
    defaults: {cli: claude-code, args: [--max-iterations, "20"]}
    heartbeat_timeout: 30        # seconds without a heartbeat before a worker counts as lost
    max_attempts: 3              # tries of a project's run (configuration errors: one)
    projects:
      shop: {path: ~/src/shop, key: claude-main, args: {timeout: 3600}}
      blog: {git: git@host:me/blog.git, branch: aidd/night, cli: opencode}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aidd.errors import UsageError, shown
from aidd.fleet.records import ProjectJob
from aidd.options import CLI_NAMES, OPTIONS

_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_TOP_KEYS = {"name", "pools", "defaults", "projects", "heartbeat_timeout", "max_attempts"}
_PROJECT_KEYS = {"path", "git", "branch", "cli", "key", "args", "env"}
_OWN_FLAGS = {"--project-dir", "--cli"}  # the fleet sets these itself
_OPTION_NAMES = {opt.name for opt in OPTIONS}


@dataclass(frozen=True)
class Fleet:
    name: str
    pools: Mapping[str, int]
    projects: tuple[ProjectJob, ...]
    source: Path


class _Reader:
    """Checks one file's values; `fail` names the file and the key."""

    def __init__(self, source: Path) -> None:
        self.source = source

    def fail(self, key: str, what: str) -> UsageError:
        return UsageError(f"{self.source}: {key}: {what}")

    def mapping(self, key: str, value: Any) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise self.fail(key, f"expected a mapping, got {shown(value)}")
        return value

    def name(self, key: str, value: Any) -> str:
        if not isinstance(value, str) or not _NAME_RE.fullmatch(value):
            raise self.fail(key, f"expected a name of letters, digits, '.', '_' or '-', got "
                                 f"{shown(value)}")
        return value

    def number(self, key: str, value: Any, low: float) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or value < low:
            raise self.fail(key, f"expected a number of at least {low:g}, got {shown(value)}")
        return float(value)

    def text(self, key: str, value: Any) -> str:
        if not isinstance(value, str) or not value.strip() or "\0" in value:
            raise self.fail(key, f"expected a string, got {shown(value)}")
        return value

    def unknown(self, key: str, found: Mapping[str, Any], allowed: set[str]) -> None:
        extra = sorted(set(found) - allowed)
        if extra:
            known = ", ".join(sorted(allowed))
            raise self.fail(f"{key}{extra[0]}", f"unknown key (known: {known})")


def load_fleet(source: Path) -> Fleet:
    """Read and check `source`."""
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{source}: cannot read the fleet file ({exc.__class__.__name__})") \
            from None
    return parse_fleet(text, source)


def parse_fleet(text: str, source: Path) -> Fleet:
    import yaml  # lazy, as in aidd.config

    reader = _Reader(source)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "YAML"
        raise reader.fail(where, "not valid YAML") from None
    top = reader.mapping("(top)", data)
    reader.unknown("", top, _TOP_KEYS)
    name = reader.name("name", top.get("name", _default_name(source)))
    pools = {reader.name(f"pools.{k}", k): int(reader.number(f"pools.{k}", v, 1))
             for k, v in reader.mapping("pools", top.get("pools")).items()}
    defaults = reader.mapping("defaults", top.get("defaults"))
    reader.unknown("defaults.", defaults, _PROJECT_KEYS - {"path", "git"})
    common = {
        "heartbeat_s": reader.number("heartbeat_timeout", top.get("heartbeat_timeout", 30), 1),
        "max_attempts": int(reader.number("max_attempts", top.get("max_attempts", 3), 1)),
    }
    projects = reader.mapping("projects", top.get("projects"))
    if not projects:
        raise reader.fail("projects", "the fleet has no project")
    jobs = tuple(_project(reader, name, key, {**defaults, **reader.mapping(f"projects.{key}", v)},
                          pools, common) for key, v in projects.items())
    return Fleet(name=name, pools=pools, projects=jobs, source=source)


def _default_name(source: Path) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]", "-", source.stem).lstrip("._-")
    return stem or "fleet"


def _project(reader: _Reader, fleet: str, key: str, spec: dict[str, Any],
             pools: Mapping[str, int], common: dict[str, Any]) -> ProjectJob:
    where = f"projects.{key}"
    name = reader.name(where, key)
    reader.unknown(f"{where}.", spec, _PROJECT_KEYS)
    if ("path" in spec) == ("git" in spec):
        raise reader.fail(where, "give exactly one of path (a local directory) or git (a URL)")
    cli = spec.get("cli", "claude-code")
    if cli not in CLI_NAMES:
        raise reader.fail(f"{where}.cli", f"unknown CLI {shown(cli)} (known: "
                                          f"{', '.join(CLI_NAMES)})")
    pool = spec.get("key", "")
    if pool and pool not in pools:
        raise reader.fail(f"{where}.key", f"unknown pool {shown(pool)} (add it under pools)")
    path = _path(reader, f"{where}.path", spec) if "path" in spec else ""
    args = _args(reader, f"{where}.args", spec.get("args"))
    env = {reader.text(f"{where}.env", k): str(v)
           for k, v in reader.mapping(f"{where}.env", spec.get("env")).items()}
    slots = _slots(reader, where, args, env)
    if pool and slots > pools[pool]:
        raise reader.fail(f"{where}.args", f"--parallel {slots} needs more than the "
                                           f"{pools[pool]} slot(s) of pool {shown(pool)}")
    return ProjectJob(
        fleet=fleet, name=name, path=path,
        git=reader.text(f"{where}.git", spec["git"]) if "git" in spec else "",
        branch=reader.text(f"{where}.branch", spec.get("branch", "aidd/fleet")),
        cli=cli, args=args, pool=pool, env=env, slots=slots, **common)


def _slots(reader: _Reader, where: str, args: list[str], env: dict[str, str]) -> int:
    """The pool slots the project's run holds: the `--parallel N` of its args (the last, as
    aidd reads its flags), else `AIDD_PARALLEL` of its env, else 1."""
    key, raw = f"{where}.env", env.get("AIDD_PARALLEL")
    for i, arg in enumerate(args):
        if arg == "--parallel" and i + 1 < len(args):
            key, raw = f"{where}.args", args[i + 1]
        elif arg.startswith("--parallel="):
            key, raw = f"{where}.args", arg.partition("=")[2]
    if raw is None:
        return 1
    if not raw.strip().isdigit() or int(raw) < 1:
        raise reader.fail(key, f"--parallel: expected a whole number of at least 1, "
                               f"got {shown(raw)}")
    return int(raw)


def _path(reader: _Reader, key: str, spec: dict[str, Any]) -> str:
    raw = Path(reader.text(key, spec["path"])).expanduser()
    return str(raw if raw.is_absolute() else (reader.source.parent / raw).resolve())


def _args(reader: _Reader, key: str, value: Any) -> list[str]:
    """aidd's flags, as a list (`[--max-iterations, 5]`) or as config keys
    (`{max-iterations: 5, stop-when-done: true}`)."""
    if isinstance(value, dict):
        return _flags_from_keys(reader, key, reader.mapping(key, value))
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise reader.fail(key, f"expected a list of flags or a mapping of config keys, got "
                               f"{shown(value)}")
    args = [str(v) for v in value]
    for own in _OWN_FLAGS.intersection(args):
        raise reader.fail(key, f"{own} is set by the fleet (path and cli)")
    return args


def _flags_from_keys(reader: _Reader, key: str, keys: dict[str, Any]) -> list[str]:
    args: list[str] = []
    for name, value in keys.items():
        flag = f"--{name.replace('_', '-')}"
        if flag[2:] not in _OPTION_NAMES or flag in _OWN_FLAGS:
            raise reader.fail(f"{key}.{name}", "not a configuration key of aidd (aidd --help)")
        if value is True:
            args.append(flag)
        elif isinstance(value, list):
            args += [part for item in value for part in (flag, str(item))]
        elif value is not False and value is not None:
            args += [flag, str(value)]
    return args
