"""A board edit the agent wrote over (issue 31 item 7): the versions of each feature file seen
during one attempt, and after it, the fields a person changed meanwhile that the attempt's
last write set back to their value at its start, restored.

A field counts as overwritten when some version seen during the attempt changed it and the file
at the end holds the attempt-start value again: an agent that read the file before the edit and
wrote its whole copy back. The agent's own fields (`status`, `passes`, `updatedAt`, `gateNote`)
are never restored: it is meant to change them. A version the watcher reads too late (the agent
wrote within the same instant) is not seen; `aidd feature set` avoids the race altogether.
"""

from __future__ import annotations

import os
import threading
from typing import Any, NamedTuple

from aidd.project.features import load_features
from aidd.project.featurescan import FEATURE_FILE, reread, rewrite
from aidd.project.paths import ProjectPaths

AGENT_KEYS = frozenset({"status", "passes", "updatedAt", "gateNote"})
_ABSENT = object()  # a key the version does not have


class Restored(NamedTuple):
    name: str  # the feature's directory under features/
    keys: tuple[str, ...]


class FeatureGuard:
    """`begin()` before an attempt, `noticed(path)` for each change the watcher reports (from
    its thread), `restore()` after the attempt."""

    def __init__(self, paths: ProjectPaths) -> None:
        self.paths = paths
        self._top = str(paths.features) + os.sep
        self._lock = threading.Lock()
        self._start: dict[str, dict[str, Any]] = {}
        self._edits: dict[str, dict[str, Any]] = {}  # location -> key -> newest changed value

    def begin(self) -> None:
        start = {f.location: dict(f.data) for f in load_features(self.paths, validate=False)
                 if isinstance(f.data, dict)}
        with self._lock:
            self._start, self._edits = start, {}

    def noticed(self, path: str) -> None:
        if not path.startswith(self._top) or path.count(os.sep, len(self._top)) != 1 \
                or not path.endswith(os.sep + FEATURE_FILE):
            return
        data = self._read(path)
        with self._lock:
            start = self._start.get(path)
            if data is None or start is None:
                return
            edits = self._edits.setdefault(path, {})
            for key in (start.keys() | data.keys()) - AGENT_KEYS:
                value = data.get(key, _ABSENT)
                if value != start.get(key, _ABSENT):
                    edits[key] = value

    def restore(self) -> list[Restored]:
        """Put back every overwritten field, re-reading each file right before; the files
        changed, each with its keys."""
        with self._lock:
            work = [(loc, self._start[loc], dict(e)) for loc, e in self._edits.items() if e]
            self._edits = {}
        restored = []
        for location, start, edits in work:
            data = self._read(location)
            if data is None:
                continue
            lost = sorted(k for k, v in edits.items()
                          if data.get(k, _ABSENT) == start.get(k, _ABSENT) != v)
            if not lost:
                continue
            for key in lost:
                if edits[key] is _ABSENT:
                    data.pop(key, None)
                else:
                    data[key] = edits[key]
            rewrite(self.paths, location, data)
            name = os.path.relpath(location.rpartition(os.sep)[0], self.paths.features)
            restored.append(Restored(name, tuple(lost)))
        return restored

    def _read(self, location: str) -> dict[str, Any] | None:
        try:
            return reread(self.paths, location)
        except (OSError, ValueError):
            return None
