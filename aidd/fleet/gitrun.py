"""git for a worker's checkout of a project: argv only, no hook or fsmonitor of the project's
repository runs (the agent may have written them), and a fixed identity for aidd's commits."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from temporalio.exceptions import ApplicationError

from aidd.fleet.connection import without_credentials
from aidd.project.checkpoints import SAFE_GIT

SAFE = (*SAFE_GIT, "-c", "commit.gpgsign=false")
# Who the fleet's commits say made them: no git identity needs to be configured on a worker.
IDENTITY = {"GIT_AUTHOR_NAME": "aidd fleet", "GIT_AUTHOR_EMAIL": "aidd-fleet@localhost",
            "GIT_COMMITTER_NAME": "aidd fleet", "GIT_COMMITTER_EMAIL": "aidd-fleet@localhost"}
TIP_REF = "refs/aidd/fleet/tip"  # a checkout's last commit for its branch, pushed or not
TIMEOUT_S = 600.0  # a clone of a big project may take minutes; a hung push must not stay
_QUIET = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"}  # never wait for a password


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str

    @property
    def ok(self) -> bool:
        return self.code == 0


_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def is_object_id(text: object) -> TypeGuard[str]:
    """A full SHA-1 or SHA-256 object id (and nothing git could read as an option)."""
    return isinstance(text, str) and _OBJECT_ID.fullmatch(text) is not None


def git_environ() -> dict[str, str]:
    """The environment of the fleet's git: the worker's without its Temporal credentials (a
    filter the agent configured in the checkout's .git/config runs inside `git add`), with
    aidd fleet's identity and no password prompt."""
    return {**without_credentials(os.environ), **IDENTITY, **_QUIET}


async def git(cwd: Path, *args: str, check: bool = True) -> Done:
    """`git ARGS` in `cwd`; with `check`, a failure is the activity's (retried) error."""
    proc = await asyncio.create_subprocess_exec(
        "git", *SAFE, *args, cwd=cwd, env=git_environ(),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), TIMEOUT_S)
    except TimeoutError:  # a network that swallows packets: give up, the next push retries
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        out, err = b"", f"timed out after {TIMEOUT_S:g} s".encode()
    done = Done(int(proc.returncode or 0), out.decode("utf-8", "replace").strip(),
                err.decode("utf-8", "replace").strip())
    if check and not done.ok:
        raise ApplicationError(f"git {args[0]} failed in {cwd}: {done.err[:300]}")
    return done


async def revision(cwd: Path, name: str, kind: str = "commit") -> str:
    """The commit (or other object `kind`) `name` names, or "" when there is none."""
    peeled = name if name.endswith("}") else f"{name}^{{{kind}}}"
    done = await git(cwd, "rev-parse", "--verify", "--quiet", peeled, check=False)
    return done.out if done.ok else ""


async def current_branch(cwd: Path) -> str:
    """The branch HEAD is on, or "" (detached)."""
    done = await git(cwd, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    return done.out if done.ok else ""


async def is_ancestor(cwd: Path, older: str, newer: str) -> bool:
    """`older` is `newer` or one of its ancestors."""
    return (await git(cwd, "merge-base", "--is-ancestor", older, newer, check=False)).ok
