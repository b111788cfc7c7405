"""The gate's commands as configured: `gate:` in a config file, `--gate CMD` or `AIDD_GATE`.

Light on purpose: the flag table imports it for every start, `--help` included."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aidd.console import aidd_command, shell_line

DEFAULT_TIMEOUT_S = 600
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._ -]{0,63}")
_KEYS = ("name", "run", "timeout", "junit")
_MAX_RUN = 4096


@dataclass(frozen=True)
class GateCommand:
    name: str
    run: str  # a shell command line, run by /bin/sh in the project
    timeout_s: int = DEFAULT_TIMEOUT_S
    junit: str | None = None  # project-relative path of the JUnit XML report it writes


class GateConfigError(ValueError):
    """A gate entry that cannot be used; the caller says where it came from."""


def parse_gate(raw: Any) -> tuple[GateCommand, ...]:
    """A list of command lines or `{name, run, timeout, junit}` mappings (one command line
    alone is a list of one). Names are unique; an unnamed command is named by its command
    line as written (`shell_line`): that is how the console, the events, the report and the
    doctor show it."""
    items = list(raw) if isinstance(raw, list | tuple) else [raw]
    commands = tuple(_entry(item, index) for index, item in enumerate(items, 1))
    names = [c.name for c in commands]
    for name in names:
        if names.count(name) > 1:
            raise GateConfigError(f"two gate commands are named {name!r}")
    return commands


def _entry(item: Any, index: int) -> GateCommand:
    if isinstance(item, str):
        run = _run(item, index)
        return GateCommand(shell_line(run), run)
    if not isinstance(item, dict):
        raise GateConfigError(f"entry {index} must be a command line or a mapping with 'run'")
    unknown = [str(k) for k in item if k not in _KEYS]
    if unknown:
        raise GateConfigError(f"entry {index} has unknown key {unknown[0]!r} "
                              f"(known: {', '.join(_KEYS)})")
    run = _run(item.get("run"), index)
    name = item.get("name", shell_line(run))
    if "name" in item and (not isinstance(name, str) or not _NAME_RE.fullmatch(name)):
        raise GateConfigError(f"entry {index}: name {name!r} must be 1-64 letters, digits, "
                              "'.', '_', '-' or spaces")
    return GateCommand(name, run, _timeout(item.get("timeout", DEFAULT_TIMEOUT_S), index),
                       _junit(item.get("junit"), index))


def _run(value: Any, index: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise GateConfigError(f"entry {index} needs 'run', a command line")
    if "\0" in value or len(value) > _MAX_RUN:
        raise GateConfigError(f"entry {index}: 'run' must be text without NUL, at most "
                              f"{_MAX_RUN} characters")
    return value.strip()


def _timeout(value: Any, index: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 86400:
        raise GateConfigError(f"entry {index}: 'timeout' must be whole seconds from 1 to 86400")
    return value


def _junit(value: Any, index: int) -> str | None:
    if value is None:
        return None
    parts = value.split("/") if isinstance(value, str) else []
    if not parts or value.startswith("/") or "\0" in value or ".." in parts or "" in parts:
        raise GateConfigError(f"entry {index}: 'junit' must be a path inside the project, "
                              "relative to it, without '..'")
    return str(value)


def waiting_for_approval(gate: tuple[GateCommand, ...], config: Path) -> str:
    """The gate a project's aidd.yaml proposes, which runs only once the user approved that
    file (issue 27 item 8): what it is and the command that approves it, pasteable anywhere."""
    commands = "; ".join(shell_line(command.run) for command in gate)
    return (f"the gate of {config} ({commands}) waits for your approval and does not run: "
            f"review the file, then {aidd_command(config.parent.parent, '--allow')}")
