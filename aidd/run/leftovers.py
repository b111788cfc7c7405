"""What a killed `--parallel` run left (docs/parallel.md "At the start"): its worktrees
committed and removed, its merged branches deleted, its unmerged ones kept and named, its
marks taken off the board. Done once a run, at its start, whatever this run's N: a night
killed at `--parallel 3` and restarted without it still gets its work named."""

from __future__ import annotations

from functools import partial

from aidd.fsio import FileTooLargeError, read_file
from aidd.project.features import load_features
from aidd.project.paths import ProjectPaths
from aidd.project.worktrees import BRANCH_PREFIX, WorktreeError, Worktrees, base_dir
from aidd.run.journal import Journal
from aidd.run.preflight import RunPlan

_PACKED_LIMIT = 64 << 20


def clean(plan: RunPlan, trees: Worktrees, journal: Journal) -> tuple[str, ...]:
    """The unmerged branches kept (named in every header after: `RunPlan.kept_branches`)."""
    try:
        left = trees.clean_up()
    except WorktreeError as exc:
        journal.warn(f"parallel: the worktrees of a stopped run not cleaned: {exc}")
        return ()
    journal.events.emit("worktrees_cleaned", removed=list(left.removed), kept=list(left.kept),
                        deleted=list(left.deleted))
    from aidd.project import boardmarks  # lazy: only a killed --parallel run's marks

    for file in load_features(plan.paths, validate=False):
        rel = f".automaker/features/{file.dir_name}/feature.json"
        boardmarks.clear_left(plan.paths.root, rel, file.data, partial(trees.committed, rel),
                              BRANCH_PREFIX)
    if left.kept:
        journal.say(f"parallel: unmerged branches of a stopped run kept (their next attempt "
                    f"resumes on them): {', '.join(left.kept)}", "WARN")
    return left.kept


def at_start(plan: RunPlan, journal: Journal) -> tuple[str, ...]:
    """The clean-up of a run's start: with slots, always; without, only where the repository
    shows a worktree or an `aidd/` branch (read from its files: no git run at each start)."""
    trees = plan.worktrees
    if trees is None:
        if not _maybe_left(plan.paths):
            return ()
        try:
            trees = Worktrees(plan.paths.root, plan.settings.environ, base_dir(
                plan.paths.root, plan.settings.environ, plan.settings.worktree_dir))
        except WorktreeError:
            return ()  # not the top of its own repository: no slot ever ran here
    return clean(plan, trees, journal)


def _maybe_left(paths: ProjectPaths) -> bool:
    git = paths.root / ".git"
    if git.is_symlink() or not git.is_dir():
        return False
    worktrees, heads = git / "worktrees", git / "refs" / "heads" / BRANCH_PREFIX.rstrip("/")
    if (worktrees.is_dir() and any(worktrees.iterdir())) or heads.is_dir():
        return True
    try:
        packed = read_file(paths.root, git / "packed-refs", _PACKED_LIMIT)
    except FileTooLargeError:
        return True
    except OSError:
        return False
    return f" refs/heads/{BRANCH_PREFIX}".encode() in packed
