"""The chosen CLI on this machine: found and a tested version, not nested inside another
agent, and runnable by this user (claude refuses root without IS_SANDBOX=1)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

from aidd.agents.base import Adapter
from aidd.agents.hints import HINTS, NESTED_VARS
from aidd.agents.version import is_tested
from aidd.doctor.findings import Finding, fail, ok, warn
from aidd.errors import ExitCode


def find_binary(adapter: Adapter, environ: Mapping[str, str]) -> str | None:
    return shutil.which(adapter.binary, path=environ.get("PATH"))


def check_cli(adapter: Adapter, binary: str | None, version: str | None) -> Finding:
    """`version`: the first line of `<binary> --version` ("unknown" when it printed none)."""
    hints = HINTS[adapter.name]
    tested = ", ".join(f"{prefix}x" for prefix in adapter.tested_versions)
    if binary is None:
        return fail("cli", f"{adapter.binary} ({adapter.display_name}) is not on PATH",
                    f"install it: {hints.install}", ExitCode.CLI_ERROR, blocks_run=True)
    if version is None or not is_tested(adapter, version):
        return warn("cli", f"{adapter.binary} {version or 'unknown'} at {binary} has not been "
                    f"tested with aidd (tested: {tested})",
                    f"it may work; a tested version: {hints.install}")
    return ok("cli", f"{adapter.binary} {version} at {binary} (tested: {tested})")


def check_nested(environ: Mapping[str, str]) -> Finding:
    """aidd started from another agent's shell (ADP-11): the outer agent's limits and
    sandbox apply to the whole run, and its variables reach this run's agents."""
    found = [name for name in NESTED_VARS if environ.get(name)]
    if not found:
        return ok("nested", "not inside another agent (" + ", ".join(NESTED_VARS) + " unset)")
    who = NESTED_VARS[found[0]]
    return warn("nested", f"{', '.join(found)} set: aidd runs inside {who}",
                "run aidd from your own terminal (or unset " + " ".join(found) + ")")


def check_root(adapter: Adapter, environ: Mapping[str, str], euid: int | None = None
               ) -> Finding:
    """claude refuses --dangerously-skip-permissions as root unless IS_SANDBOX=1, at once,
    in every attempt (docs/real-clis.md)."""
    euid = os.geteuid() if euid is None else euid
    if euid != 0:
        return ok("root", f"running as uid {euid}, not root")
    needs = HINTS[adapter.name].root_needs
    if needs is None:
        return ok("root", f"running as root; {adapter.display_name} runs with --auto as root "
                  "too")
    name, value = needs
    if environ.get(name) == value:
        return ok("root", f"running as root with {name}={value}: {adapter.display_name} "
                  "accepts its permission flag")
    given = f"{name}={environ[name]}" if name in environ else f"{name} unset"
    return fail("root", f"running as root, {given}: {adapter.display_name} refuses "
                "--dangerously-skip-permissions", f"set {name}={value} (only in a sandbox, "
                "container or VM you can lose) or run aidd as a normal user",
                ExitCode.CLI_ERROR, blocks_run=True)
