"""`--parallel N`: the board shows a feature worked in a worktree as AutoMaker's own auto mode
does (docs/parallel.md "AutoMaker's board"): its file in the project carries `branchName` (the
worktree's branch) and `status: in_progress` while a slot works it, and is given back as it was
before the merge or when the slot lets it go. The mark is the project's only: a worktree's copy
never carries one (the branch would bring it back with the merge)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aidd.fsio import write_atomic
from aidd.project import jsonfile
from aidd.project.featurescan import dumps, read_feature

IN_PROGRESS = "in_progress"  # AutoMaker's status of a feature its auto mode works


@dataclass(frozen=True)
class Mark:
    """A feature file as it was before the mark, and as the mark left it."""

    rel: str  # `.automaker/features/<dir>/feature.json`
    before: bytes
    marked: bytes


def mark(root: Path, rel: str, branch: str) -> Mark | None:
    """The project's feature file marked as worked on `branch`; None when it cannot be (not
    readable, not a JSON object: the board is left as it is)."""
    path = root / rel
    with contextlib.suppress(OSError, ValueError):
        before = read_feature(str(path), str(root))
        data = jsonfile.loads(before) if before is not None else None
        if before is not None and isinstance(data, dict):
            marked = _dumps(data | {"branchName": branch, "status": IN_PROGRESS})
            write_atomic(path, marked, root=root)
            return Mark(rel, before, marked)
    return None


def clear_left(root: Path, rel: str, data: object, committed: Callable[[], bytes | None],
               prefix: str) -> bool:
    """At the slots' start: a mark a killed run left (`branchName` one of aidd's `prefix`
    branches) taken off, the file as the project's commit has it, else without the branch
    (its status then stays). Before any slot seeds a copy of it. True when one was."""
    if not isinstance(data, dict) or not str(data.get("branchName") or "").startswith(prefix):
        return False
    with contextlib.suppress(OSError):
        write_atomic(root / rel, committed() or _dumps(
            {k: v for k, v in data.items() if k != "branchName"}), root=root)
        return True
    return False


def _dumps(data: dict[str, object]) -> bytes:
    return dumps(data).encode()  # as aidd writes every feature file


def unmark(root: Path, found: Mark) -> None:
    """The file as it was, unless someone (AutoMaker, the user) wrote it since the mark."""
    path = root / found.rel
    with contextlib.suppress(OSError):
        if read_feature(str(path), str(root)) == found.marked:
            write_atomic(path, found.before, root=root)


def carried(agent: bytes, found: Mark | None, board: bytes | None,
            agent_keys: frozenset[str]) -> bytes:
    """The feature file to write on the board after its branch merged: the agent's, but a
    field a person (or AutoMaker) changed on the board while the slot worked keeps their
    value, as the single loop's board-edit guard keeps it (featureguard); the agent's own
    fields (`agent_keys`: its verdict) stay the agent's, and the mark goes with the merge."""
    if found is None or board is None or board in (found.marked, agent):
        return agent  # no edit; or the merge brought the agent's file (`.automaker/` tracked)
    with contextlib.suppress(ValueError):
        mine, now, marked = (jsonfile.loads(raw) for raw in (agent, board, found.marked))
        if isinstance(mine, dict) and isinstance(now, dict) and isinstance(marked, dict):
            absent = object()
            edited = {k for k in now.keys() | marked.keys()
                      if k not in agent_keys and now.get(k, absent) != marked.get(k, absent)}
            merged = {k: now[k] if k in edited else v for k, v in mine.items()
                      if k not in edited or k in now}
            return _dumps(merged | {k: now[k] for k in edited if k in now})
    return agent


def unmarked_copy(tree: Path, found: Mark) -> None:
    """A worktree's copy of a feature another slot works: as the project's commit or board had
    it before the mark (the seed copied the marked file)."""
    with contextlib.suppress(OSError):
        if read_feature(str(tree / found.rel), str(tree)) == found.marked:
            write_atomic(tree / found.rel, found.before, root=tree)
