"""The one list of agent CLIs, keyed by their `--cli` value (ADP-1). To add a CLI, write its
module (an `Adapter`, see base.py) and add a line here; the first one is the default.

An adapter's module is imported on first use: the flag table needs only the names, and a
one-shot such as `--status` starts about 40 ms sooner without the adapters (`-X importtime`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # the type only: importing base at run time costs what the laziness saves
    from aidd.agents.base import Adapter

_CLASSES = {
    "opencode": "aidd.agents.opencode:OpenCode",
    "kilocode": "aidd.agents.kilocode:KiloCode",
    "claude-code": "aidd.agents.claude_code:ClaudeCode",
}


class _Registry(Mapping[str, "Adapter"]):
    def __init__(self, classes: Mapping[str, str]) -> None:
        self._classes = classes
        self._made: dict[str, Adapter] = {}

    def __getitem__(self, name: str) -> Adapter:
        if name not in self._made:
            module, _, cls = self._classes[name].partition(":")
            self._made[name] = cast("Adapter", getattr(importlib.import_module(module), cls)())
        return self._made[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._classes)

    def __len__(self) -> int:
        return len(self._classes)


ADAPTERS: Mapping[str, Adapter] = _Registry(_CLASSES)
