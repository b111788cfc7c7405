"""Every supported agent CLI, keyed by its `--cli` value (ADP-1)."""

from __future__ import annotations

from aidd.agents.base import Adapter
from aidd.agents.claude_code import ClaudeCode
from aidd.agents.kilocode import KiloCode
from aidd.agents.opencode import OpenCode

ADAPTERS: dict[str, Adapter] = {
    "opencode": OpenCode(),
    "kilocode": KiloCode(),
    "claude-code": ClaudeCode(),
}
