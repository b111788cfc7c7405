"""git for a worker's checkout of a project, through project/git: nothing the checkout's
.git/config names runs (the agent may have written it); clone, fetch and push keep the user's
own global config for credentials; a fixed identity for aidd's commits."""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from temporalio.exceptions import ApplicationError

from aidd.fleet.connection import without_credentials
from aidd.project.git import Git, GitError

_NETWORK = frozenset({"clone", "fetch", "push"})  # the ones that need the user's credentials
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
    runner = Git(cwd, git_environ(), network=args[0] in _NETWORK, timeout=TIMEOUT_S)
    try:  # a network that swallows packets times out: the next push retries
        ran = await asyncio.to_thread(runner.run, *args)
        done = Done(ran.code, ran.out.decode("utf-8", "replace").strip(),
                    ran.err.decode("utf-8", "replace").strip())
    except GitError as exc:
        done = Done(-1, "", str(exc))
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
