"""The configuration: each config layer valid (the user's file, the project's, the AIDD_*
variables), the copy lists, and the gate's programs found."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from aidd.config import Settings, xdg_config_home
from aidd.console import program_of
from aidd.doctor.findings import Finding, fail, ok, warn
from aidd.errors import ExitCode
from aidd.gate.commands import GateCommand, waiting_for_approval
from aidd.project.copylists import (
    COPYDIRS,
    COPYFILES,
    Entry,
    ListSources,
    find_list,
    parse_entries,
)
from aidd.project.paths import ProjectPaths
from aidd.project.sync import resolve_target

# What /bin/sh runs without a program on PATH.
_SHELL_WORDS = frozenset(("!", ".", ":", "[", "case", "cd", "command", "eval", "exec", "exit",
                          "export", "false", "for", "if", "set", "test", "true", "while", "{",
                          "(", "until", "ulimit", "umask", "unset", "trap", "wait"))


def check_config(settings: Settings, paths: ProjectPaths) -> list[Finding]:
    user = xdg_config_home(settings.environ) / "aidd" / "config.yaml"
    return [_file_layer(settings, "user", "user config", user),
            _file_layer(settings, "project", "project config", paths.config),
            _environment(settings)]


def _file_layer(settings: Settings, layer: str, name: str, path: Path) -> Finding:
    problems = [p for p in settings.config_problems if p.layer == layer]
    if problems:
        return fail(name, problems[0].message, f"fix or remove that key in {path}",
                    ExitCode.INVALID_ARGS)
    if str(path) in settings.config_sources:
        return ok(name, f"{path} is valid")
    if path.is_file():
        return ok(name, f"{path} is valid (sets nothing)")
    return ok(name, f"none ({path})")


def _environment(settings: Settings) -> Finding:
    problems = [p for p in settings.config_problems if p.layer == "environment"]
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return fail("variables", problems[0].message + more,
                    f"fix or unset {' '.join(p.source for p in problems)}",
                    ExitCode.INVALID_ARGS)
    used = [s for s in settings.config_sources if s.startswith("AIDD_")]
    return ok("variables", f"{', '.join(used)} valid" if used else "no AIDD_* setting")


def check_copy_lists(settings: Settings, paths: ProjectPaths, home: Path) -> Finding:
    """What a run's sync would warn about, found without copying anything."""
    sources = ListSources(home=home, aidd_home=settings.aidd_home,
                          xdg_config_home=settings.xdg_config_home)
    problems: list[str] = []
    found: list[str] = []
    for name, mirror in ((COPYDIRS, True), (COPYFILES, False)):
        listed = find_list(name, sources, problems.append)
        if listed is None:
            continue
        entries = parse_entries(listed[0], listed[1], home, problems.append)
        found.append(f"{listed[0]} ({len(entries)} entries)")
        problems.extend(filter(None, (_entry_problem(e, paths.root, mirror) for e in entries)))
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return warn("copy lists", problems[0] + more, "fix those lines: a run skips them")
    return ok("copy lists", ", ".join(found) if found else "none in use")


def _entry_problem(entry: Entry, root: Path, mirror: bool) -> str | None:
    source = entry.source
    if not source.exists():
        return f"{entry.where}: source {source} does not exist"
    if mirror != source.is_dir():
        return f"{entry.where}: source {source} is {'not ' if mirror else ''}a directory"
    target, why = resolve_target(entry, root, mirror=mirror)
    return None if target is not None else f"{entry.where}: {entry.target}: {why}"


def check_gate(settings: Settings) -> Finding:
    if settings.gate_unapproved:
        config = ProjectPaths(settings.project_dir).config
        return warn("gate", waiting_for_approval(settings.gate_unapproved, config),
                    "read the gate's commands in that file; approve them with --allow")
    if not settings.gate:
        return ok("gate", "no gate configured")
    missing = [f"{c.name} ({word})" for c in settings.gate
               if (word := _missing_program(c, settings.project_dir, settings.environ))]
    if missing:
        return fail("gate", f"program not found for {', '.join(missing)}",
                    "install it, or fix the gate's command line", ExitCode.INVALID_ARGS)
    names = ", ".join(c.name for c in settings.gate)
    return ok("gate", f"{len(settings.gate)} commands, programs found: {names}")


def _missing_program(command: GateCommand, root: Path, environ: Mapping[str, str]
                     ) -> str | None:
    """The first program of the command line when it cannot be found, else None."""
    try:
        program = program_of(command.run)  # `CI=1 pytest`: pytest
    except ValueError:
        return "unbalanced quotes"
    if program is None or program in _SHELL_WORDS:
        return None
    if "/" in program:
        path = root / program
        return None if path.is_file() and os.access(path, os.X_OK) else program
    return None if shutil.which(program, path=environ.get("PATH")) else program


