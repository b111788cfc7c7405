"""Rolling the project back to a checkpoint: first the present state is checkpointed (so the
rollback can be undone), then every file the checkpoint differs in is restored, recreated or
removed. Ignored files and aidd's runtime files are in no checkpoint, so they stay (issue 15)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from aidd.console import aidd_command
from aidd.fsio import unlink
from aidd.project.checkpointnames import REF_ROOT, is_run_id, run_of
from aidd.project.checkpoints import ROLLBACK_INDEX, CheckpointError, CheckpointStore

BEFORE = "before-rollback"  # the label of the checkpoint a rollback takes first


@dataclass(frozen=True)
class Rollback:
    target: str  # the ref rolled back to
    saved: str  # the ref of the state before the rollback: roll back to it to undo
    restored: tuple[str, ...]  # project-relative paths written back (changed or removed)
    removed: tuple[str, ...]  # project-relative paths the checkpoint did not have


def find_checkpoint(store: CheckpointStore, name: str) -> str:
    """The ref named by `name`: a full ref, or a label (NNN, NNN-prekill, NNN-end,
    before-rollback): the newest checkpoint with that label. Only runs aidd could have made
    count (a well-formed run id, not started in the future), and the newest is the one with
    the latest run id, not the latest commit date: both are written by whoever planted a ref."""
    if not store.exists():
        raise CheckpointError(f"no checkpoint named {name!r} (this project has none)")
    env = store.git_at(store.root / ROLLBACK_INDEX)
    pattern = name if name.startswith("refs/") else f"{REF_ROOT}/*/{name}"
    refs = store.git(env, "for-each-ref", "--format=%(refname)", pattern).splitlines()
    runs = {ref: run_of(ref) for ref in refs}
    ours = sorted((ref for ref, run in runs.items() if ref.startswith(REF_ROOT + "/")
                   and is_run_id(run)), key=lambda ref: runs[ref])
    if not ours:
        raise CheckpointError(f"no checkpoint named {name!r} (see "
                              f"{aidd_command(store.root, '--checkpoints')})")
    return ours[-1]


def roll_back(store: CheckpointStore, name: str) -> Rollback:
    target = find_checkpoint(store, name)
    saved = store.record(BEFORE)
    index = store.root / ROLLBACK_INDEX
    unlink(store.root, index)  # read-tree must not read a stale, planted or FIFO index
    env = store.git_at(index)
    top = store.repo.work_tree
    prefix = store.root.resolve().relative_to(top.resolve()).as_posix()
    inside = "" if prefix == "." else prefix + "/"
    changes = store.git(env, "diff-tree", "-r", "-z", "--no-renames", "--name-status",
                        saved.commit, target).split("\0")
    pairs = [(changes[i], changes[i + 1][len(inside):]) for i in range(0, len(changes) - 1, 2)
             if changes[i + 1].startswith(inside)]  # project-relative from here on
    write = [path for status, path in pairs if status != "D"]
    gone = [path for status, path in pairs if status == "D"]
    for path in gone:  # files the agent added after the checkpoint
        _remove(store.root, path)
    if write:
        store.git(env, "read-tree", target)
        store.git(env, "checkout-index", "-f", "--", *write)  # git never writes through a link
    unlink(store.root, index)
    return Rollback(target, saved.ref, tuple(write), tuple(gone))


def _remove(root: Path, path: str) -> None:
    """Unlink the file (a link itself, never through one: fsio), then the folders it leaves
    empty, up to the project."""
    target = root / path
    with contextlib.suppress(FileNotFoundError):
        unlink(root, target)
    folder = target.parent
    while folder != root:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
