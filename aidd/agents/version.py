"""Which version of the agent CLI is installed, and whether aidd was tested with it
(ADP-3, ADP-4)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from aidd.agents.base import Adapter
from aidd.agents.cliproc import run_cli

UNKNOWN = "unknown"
_NUMBER = re.compile(r"\d+\.\d+(?:\.\d+)?")


def probe_version(
    binary: str, env: Mapping[str, str] | None = None, timeout_s: float = 10.0
) -> str:
    """`<binary> --version` with stdin closed: its first non-empty line, else `unknown`."""
    out = run_cli([binary, "--version"], env=env, timeout_s=timeout_s, stderr_too=True)
    if out is None:
        return UNKNOWN
    for line in out.decode("utf-8", "replace").splitlines():
        if line.strip():
            return line.strip()
    return UNKNOWN


def is_tested(adapter: Adapter, version: str) -> bool:
    """True when `version` starts with one of the adapter's tested prefixes."""
    match = _NUMBER.search(version)
    if match is None:
        return False
    return any(match.group(0).startswith(prefix) for prefix in adapter.tested_versions)


def untested_warning(adapter: Adapter, version: str) -> str | None:
    """The one warning line for an untested or unknown version (ADP-4), else None."""
    if is_tested(adapter, version):
        return None
    tested = ", ".join(f"{prefix}x" for prefix in adapter.tested_versions)
    return f"{adapter.binary} {version} has not been tested with aidd (tested: {tested})"
