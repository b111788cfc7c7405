"""Which version of the agent CLI is installed, and whether aidd was tested with it
(ADP-3, ADP-4)."""

from __future__ import annotations

import re

from aidd.agents.base import Adapter

_NUMBER = re.compile(r"\d+\.\d+(?:\.\d+)?")


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
