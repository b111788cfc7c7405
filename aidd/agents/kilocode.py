"""kilocode: the `kilo` binary speaks opencode's `run --format json` (ADP-10, ADP-42)."""

from __future__ import annotations

from pathlib import Path

from aidd.agents.opencode import OpenCode


class KiloCode(OpenCode):
    name = "kilocode"
    binary = "kilo"
    display_name = "Kilo Code"
    tested_versions = ("7.7.",)

    def prepare_project(self, root: Path) -> list[tuple[str, str]]:
        """kilo keeps its own configuration; opencode.json is not its file."""
        return []
