"""The TODO syntax (CMP-20/21): a line-based classifier shared by completion, TODO mode and status.

Also finds the TODO file the status report shows (FEA-33).
"""

from __future__ import annotations

import re
from enum import Enum, unique
from pathlib import Path
from typing import NamedTuple

from aidd.fsio import read_file
from aidd.project import limits
from aidd.project.paths import ProjectPaths

# Project-root names the status report falls back to, in this order (FEA-33).
ROOT_TODO_NAMES = (
    "todo.md", "todos.md", "TODO.md", "TODOs.md", "TODO-list.md", "todo-list.md", "tasks.md",
    "TASKS.md",
)  # fmt: skip


@unique
class TodoClass(Enum):
    ACTIONABLE = "actionable"  # `- [ ]`: blocks completion
    DONE = "done"  # `- [x]`
    DEFERRED = "deferred"  # `- [~]` needs a human, `- [!]` acknowledged blocker
    MARKER = "marker"  # `# TODO:` / `// TODO:`: blocks completion
    OTHER = "other"  # not an item


_ITEM_RE = re.compile(r"\s*-\s*\[(\s*|[xX]|[~!])\]")
_MARKER_RE = re.compile(r"\s*(?:#|//)\s*TODO:")


def classify_line(line: str) -> TodoClass:
    """What one todo.md line is (CMP-20); leading indentation is allowed, Markdown is not parsed."""
    item = _ITEM_RE.match(line)
    if item is None:
        return TodoClass.MARKER if _MARKER_RE.match(line) else TodoClass.OTHER
    box = item.group(1)
    if box in ("x", "X"):
        return TodoClass.DONE
    return TodoClass.DEFERRED if box in ("~", "!") else TodoClass.ACTIONABLE


def item_text(line: str) -> str:
    """The text after the checkbox (or the whole stripped line for a marker)."""
    item = _ITEM_RE.match(line)
    return line[item.end() :].strip() if item else line.strip()


class TodoSummary(NamedTuple):
    """Classified lines of one TODO file; item texts are in file order."""

    actionable: tuple[str, ...] = ()
    done: tuple[str, ...] = ()
    deferred: tuple[str, ...] = ()
    markers: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return len(self.actionable) + len(self.done) + len(self.deferred)

    @property
    def complete_pct(self) -> int:
        return len(self.done) * 100 // self.total if self.total else 0

    @property
    def blocks(self) -> bool:
        return bool(self.actionable or self.markers)

    @property
    def blocking_lines(self) -> tuple[str, ...]:
        """Unchecked items; the `TODO:` markers only when no checkbox blocks."""
        return self.actionable or self.markers


def summarize(text: str) -> TodoSummary:
    lines: dict[TodoClass, list[str]] = {kind: [] for kind in TodoClass}
    for raw in text.split("\n"):
        line = raw.rstrip("\r")
        lines[classify_line(line)].append(item_text(line))
    return TodoSummary(
        actionable=tuple(lines[TodoClass.ACTIONABLE]),
        done=tuple(lines[TodoClass.DONE]),
        deferred=tuple(lines[TodoClass.DEFERRED]),
        markers=tuple(lines[TodoClass.MARKER]),
    )


def read_todo(root: Path, path: Path) -> TodoSummary | None:
    """The summary of `path`, None when it is missing or not a readable regular file inside the
    project `root` of at most limits.TODO bytes (never a FIFO: issue 13 item 7)."""
    try:
        raw = read_file(root, path, limits.TODO)
    except OSError:
        return None
    return summarize(raw.decode("utf-8", "replace"))


def find_todo_file(paths: ProjectPaths) -> Path | None:
    """`.automaker/todo.md`, else the first root TODO file that exists (FEA-33)."""
    for candidate in (paths.todo, *(paths.root / name for name in ROOT_TODO_NAMES)):
        if candidate.is_file():
            return candidate
    return None


def searched_names(paths: ProjectPaths) -> tuple[str, ...]:
    """The files `find_todo_file` looks at, project-relative, for the "no file" line."""
    return (paths.rel(paths.todo), *ROOT_TODO_NAMES)
