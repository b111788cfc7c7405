"""Where a project runs on this worker: its local path, or a per-worker clone of its git URL on
the project's branch (resumed from the branch when another worker pushed it)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from temporalio.exceptions import ApplicationError

from aidd.fleet.records import ProjectJob


def checkout_dir(job: ProjectJob, data_dir: Path) -> Path:
    return data_dir / "checkouts" / job.fleet / job.name


async def prepare(job: ProjectJob, data_dir: Path) -> Path:
    """The project directory for this attempt."""
    if not job.git:
        return Path(job.path)
    target = checkout_dir(job, data_dir)
    if not (target / ".git").exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        await _git(target.parent, "clone", "--quiet", job.git, str(target))
    await _git(target, "fetch", "--quiet", "origin")
    # The branch as the last worker pushed it, else a new branch from the default head.
    if await _git(target, "rev-parse", "--verify", "--quiet", f"origin/{job.branch}",
                  check=False) == 0:
        await _git(target, "checkout", "--quiet", "-B", job.branch, f"origin/{job.branch}")
    else:
        await _git(target, "checkout", "--quiet", "-B", job.branch)
    return target


async def _git(cwd: Path, *args: str, check: bool = True) -> int:
    proc = await asyncio.create_subprocess_exec(
        "git", *args, cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    _, err = await proc.communicate()
    code = int(proc.returncode or 0)
    if check and code != 0:
        raise ApplicationError(f"git {args[0]} failed in {cwd}: "
                               f"{err.decode('utf-8', 'replace').strip()[:300]}")
    return code
