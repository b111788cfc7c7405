"""`--migrate-features`: earlier aidd versions said done with `passes: true` on an `in_progress`
or `completed` feature; since AutoMaker's status wins (issue 31 item 1) such a feature reads in
progress. The user, who knows the project had no board reopen in between, rewrites them to
AutoMaker's done (`verified`) after a checkpoint, so `--rollback` undoes it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aidd.project import featurestate
from aidd.project.features import load_features
from aidd.project.featurescan import reread, rewrite
from aidd.project.paths import ProjectPaths

if TYPE_CHECKING:  # the type only: --status reads this module and needs no git code
    from aidd.project.checkpoints import CheckpointStore

# The statuses earlier aidd versions wrote next to `passes: true` for finished work.
OLD_DONE_STATUSES = ("in_progress", "completed")
LABEL = "before-migrate"  # the checkpoint taken first


@dataclass(frozen=True)
class Migrated:
    name: str  # the feature's directory under features/
    old_status: str


@dataclass(frozen=True)
class Migration:
    saved: str | None  # the checkpoint's ref; None when nothing needed migrating
    changed: tuple[Migrated, ...]


def needs_migration(data: Any) -> bool:
    """An earlier aidd's done: `passes: true` with `in_progress` or `completed`."""
    return (isinstance(data, Mapping) and data.get("passes") is True
            and data.get("status") in OLD_DONE_STATUSES)


def reads_differently(data: Any) -> bool:
    """An earlier aidd's done that now reads in progress (`completed` reads done either way):
    what `--status` suggests migrating."""
    return needs_migration(data) and data.get("status") == "in_progress"


def migrate_features(paths: ProjectPaths, store: CheckpointStore) -> Migration:
    """Rewrite each file that needs it to `status: "verified"`, re-reading it right before (the
    board may have changed it since), keeping every other key and its place; written
    atomically. The checkpoint comes first and only when there is something to change."""
    wanted = [f.location for f in load_features(paths, validate=False)
              if f.feature is not None and needs_migration(f.data)]
    if not wanted:
        return Migration(None, ())
    saved = store.record(LABEL).ref
    changed = []
    for location in wanted:
        try:
            data = reread(paths, location)
        except (OSError, ValueError):
            continue
        if data is None or not needs_migration(data):
            continue
        old = data["status"]
        data["status"] = featurestate.FINISHED_STATUS
        rewrite(paths, location, data)
        changed.append(Migrated(os.path.relpath(location.rpartition(os.sep)[0], paths.features),
                                old))
    return Migration(saved, tuple(changed))
