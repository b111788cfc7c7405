"""A run's checkpoints: before each attempt (NNN), just before aidd kills an agent (NNN-prekill)
and when the attempt ends (NNN-end). A checkpoint that fails is a warning, never the end of
the run; after one, the run goes on without them (issue 15)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from aidd.clock import Clock
from aidd.project.checkpoints import Checkpoint, CheckpointError, CheckpointStore
from aidd.run.journal import Journal
from aidd.run.preflight import RunPlan

REFUSED = "refused"  # checkpoint_failed's label when the repository's layout refused them all


class Checkpointer:
    def __init__(self, plan: RunPlan, journal: Journal, clock: Clock,
                 root: Path | None = None, store: CheckpointStore | None = None,
                 quiet: Callable[[], int | None] | None = None) -> None:
        """`root`: the tree the agent works in, by default the project; `store`: a slot's
        worktree's, its git directories named by aidd (project/worktrees); `quiet`: the run's
        file watcher's count of changes in `root` (project/activity), when it watches it."""
        self._journal = journal
        self._clock = clock
        self._store: CheckpointStore | None = None
        # The project's own checkpointer prunes; a slot's (`store` given) never does, or
        # several would rewrite the repository's packed refs at once.
        self._keep_runs = 0 if store is not None else plan.settings.checkpoint_keep_runs
        # Said once, at the first checkpoint the run would have made, so the health verdict
        # names it (the layout check refused the repository: issue 27 item 4).
        self._refused = None if plan.settings.no_checkpoints else plan.checkpoints_refused
        if not plan.settings.no_checkpoints and plan.checkpoints_refused is None:
            self._store = store or CheckpointStore(root or plan.paths.root,
                                                   journal.events.run_id, plan.settings.environ)
            self._store.quiet = quiet

    def record(self, number: int, suffix: str = "") -> Checkpoint | None:
        """The checkpoint, or None when checkpoints are off or this one failed."""
        if self._store is None:
            if self._refused is not None:
                self._journal.events.emit("checkpoint_failed", number=number, label=REFUSED,
                                          error=self._refused)
                self._refused = None
            return None
        label = f"{number:03d}{suffix}"
        start = self._clock.monotonic()
        try:
            if self._keep_runs:  # once, at the run's first checkpoint; this run is one of them
                self._store.prune(self._keep_runs - 1)
                self._keep_runs = 0
            point = self._store.record(label)
        except (CheckpointError, OSError) as exc:
            self._store = None
            self._journal.say(f"checkpoint {label} failed ({exc}); no more checkpoints in "
                              "this run", "WARN")
            self._journal.events.emit("checkpoint_failed", number=number, label=label,
                                      error=str(exc))
            return None
        self._journal.events.emit(
            "checkpoint", number=number, label=label, ref=point.ref, commit=point.commit,
            files=point.files, head=point.head,
            duration_s=round(self._clock.monotonic() - start, 3))
        return point

    def changed(self, start: Checkpoint | None, end: Checkpoint | None) -> tuple[str, ...]:
        """The files an attempt changed (its `NNN` and `NNN-end` checkpoints), for the next
        prompt; none known when either is missing or git fails (a loss of detail, not an error)."""
        if self._store is None or start is None or end is None:
            return ()
        try:
            return tuple(self._store.changed_paths(start, end))
        except (CheckpointError, OSError):
            return ()

    def moved(self, start: Checkpoint | None, end: Checkpoint | None) -> bool | None:
        """The attempt changed the project outside `.automaker/` (stuck detection), from its
        `NNN` and `NNN-end` checkpoints; None when either is missing or git fails."""
        if self._store is None or start is None or end is None:
            return None
        try:
            return self._store.moved(start, end)
        except (CheckpointError, OSError, ValueError):
            return None
