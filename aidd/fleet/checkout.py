"""Where a project runs on this worker: its local path, or a per-worker clone of its git URL on
the project's branch, resumed from the branch as the last attempt pushed it (aidd/fleet/publish
pushes after each iteration)."""

from __future__ import annotations

from pathlib import Path

from aidd.fleet.gitrun import TIP_REF, current_branch, git, is_ancestor, revision
from aidd.fleet.records import ProjectJob
from aidd.fsio import FileTooLargeError, UnsafePathError, make_dirs, read_file, write_atomic
from aidd.project.checkpoints import RUNTIME, RUNTIME_GLOBS

_EXCLUDE_HEAD = "# aidd fleet: aidd's runtime files, never committed nor cleaned"
_EXCLUDE_LIMIT = 1 << 20  # bytes; git's exclude file is a few lines


def checkout_dir(job: ProjectJob, data_dir: Path) -> Path:
    return data_dir / "checkouts" / job.fleet / job.name


async def prepare(job: ProjectJob, data_dir: Path) -> Path:
    """The project directory for this attempt."""
    if not job.git:
        return Path(job.path)
    target = checkout_dir(job, data_dir)
    if not (target / ".git").exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        await git(target.parent, "clone", "--quiet", job.git, str(target))
    exclude_runtime(target)
    # From the job's URL, not the checkout's `origin` (its config is the agent's to rewrite).
    await git(target, "fetch", "--quiet", job.git, "+refs/heads/*:refs/remotes/origin/*")
    remote = await revision(target, f"refs/remotes/origin/{job.branch}")
    if not remote:  # a new branch from the default head, with what this checkout holds
        if await current_branch(target) != job.branch:
            await git(target, "checkout", "--quiet", "-B", job.branch)
    elif not await _holds(target, job.branch, remote):
        await git(target, "checkout", "--quiet", "--force", "-B", job.branch, remote)
        await git(target, "clean", "--quiet", "-d", "--force")
    return target


async def _holds(target: Path, branch: str, remote: str) -> bool:
    """This checkout is on `branch` and its own last commit (the fleet's tip ref), or its HEAD,
    is at the pushed head or ahead of it: a lost attempt's work, committed but not pushed, or
    not committed yet. Keep it; a tip ahead of HEAD (an attempt cut off before it settled)
    becomes the branch's head and index, the files staying as they are. Behind or diverged: the
    remote is newer, and this checkout's leftovers are a stale attempt's."""
    if await current_branch(target) != branch:
        return False
    tip = await revision(target, TIP_REF)
    if tip and await is_ancestor(target, remote, tip):
        await git(target, "reset", "--quiet", "--mixed", tip)
        return True
    return await is_ancestor(target, remote, "HEAD")


def exclude_runtime(target: Path) -> None:
    """aidd's runtime files go into the checkout's own exclude file (never the project's
    .gitignore): `git add -A` leaves them out and `git clean` keeps them."""
    exclude = target / ".git" / "info" / "exclude"
    try:  # the agent worked in this checkout: a link, a FIFO or a huge file is not read
        text = read_file(target, exclude, _EXCLUDE_LIMIT).decode("utf-8", "replace")
    except (FileNotFoundError, UnsafePathError, FileTooLargeError):
        text = ""
    if _EXCLUDE_HEAD in text:
        return
    patterns = [f"/{path}" for path in RUNTIME]
    patterns += [glob.removeprefix("**/") if glob.startswith("**/") else f"/{glob}"
                 for glob in RUNTIME_GLOBS]
    make_dirs(target, exclude.parent)
    # Replaced, never written through: a planted link stays where it pointed, untouched.
    write_atomic(exclude, f"{text.rstrip()}\n{_EXCLUDE_HEAD}\n" + "\n".join(patterns) + "\n",
                 root=target)
