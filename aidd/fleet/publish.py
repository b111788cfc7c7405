"""A git project's work, published after each iteration: the worker's checkout commits what
changed on the project's branch (as `aidd fleet`, aidd's runtime files left out) and pushes it
without force, so a retry on any worker resumes from it. A push the remote rejects because its
branch moved on (a newer attempt pushed) makes this attempt stale: it never overwrites."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path

from aidd.clock import SystemClock
from aidd.fleet.gitrun import (
    TIP_REF,
    Done,
    current_branch,
    git,
    git_environ,
    is_ancestor,
    is_object_id,
    revision,
)
from aidd.fleet.records import Progress
from aidd.fsio import unlink
from aidd.project.checkpoints import CheckpointError, CheckpointStore
from aidd.project.paths import ProjectPaths
from aidd.project.stop import request_stop


class Push(Enum):
    NOTHING = "nothing"  # no change, nothing unpushed
    PUSHED = "pushed"
    REJECTED = "rejected"  # the remote branch moved on: this attempt is stale
    FAILED = "failed"  # git or the network failed: tried again after the next iteration


@dataclass
class Publisher:
    """Commits and pushes one checkout's work to `branch` of its `origin`, without touching the
    checkout's HEAD, index or files while aidd runs (the next agent may be at work, and may use
    git itself): a commit is made from a tree with `commit-tree` and pushed by its id; only
    `settle`, when aidd ended, brings the checkout's branch and index to the last commit."""

    root: Path
    branch: str
    # Where to push: the job's own URL (`remote.origin.url` is the checkout's config, which the
    # agent may have rewritten to send the work elsewhere); "origin" only in tests.
    remote: str = "origin"
    stale: bool = False
    head: str = ""  # the last commit pushed
    tip: str = ""  # the last commit made, pushed or not: the next one's first parent
    error: str = ""  # why the last push failed

    async def publish(self, message: str, tree_of: str = "") -> Push:
        """Commit the tree of `tree_of` (aidd's `NNN-end` checkpoint: the work tree exactly as
        the iteration left it) or, without one, of the work tree now; then push the branch."""
        if self.stale:
            return Push.REJECTED
        await self._commit(message, tree_of)
        if not self.tip or self.tip == self.head or (
                not self.head and self.tip == await revision(self.root, self._tracking)):
            return Push.NOTHING
        done = await git(self.root, "push", "--porcelain", self.remote,
                         f"{self.tip}:refs/heads/{self.branch}", check=False)
        if done.ok:
            self.head, self.error = self.tip, ""
            return Push.PUSHED
        self.error = _why(done)
        if _rejected(done.out):
            self.stale = True
            return Push.REJECTED
        return Push.FAILED

    async def settle(self) -> None:
        """aidd ended: the checkout's branch at the last commit and its index at that tree (the
        files stay as they are), so `git status` in it is clean and a retry here resumes it."""
        if not self.tip or await current_branch(self.root) != self.branch:
            return
        await git(self.root, "reset", "--quiet", "--mixed", self.tip, check=False)

    @property
    def _tracking(self) -> str:
        return f"refs/remotes/origin/{self.branch}"

    async def _commit(self, message: str, tree_of: str) -> None:
        """A commit of the tree on top of the branch (and of the agent's own commits, when it
        made some: a second parent), kept as `tip`; none when nothing changed, or git failed
        (the next iteration tries again)."""
        tree = (await revision(self.root, f"{tree_of}^{{tree}}", "tree")
                if is_object_id(tree_of) else "")  # events.jsonl is the agent's too
        tree = tree or await self._snapshot()
        tracking = await revision(self.root, self._tracking)
        base = self.tip or tracking or await revision(self.root, "HEAD")
        if not self.tip and not tracking:
            self.tip = base  # a new branch: pushed from where it starts, even with no change
        if not tree:
            return
        head = await revision(self.root, "HEAD")
        parents = [p for p in (base, head) if p]
        if base and head and (head == base or await is_ancestor(self.root, head, base)):
            parents = [base]
        if len(parents) == 1 and tree == await revision(self.root, f"{base}^{{tree}}", "tree"):
            return
        argv = ["commit-tree", tree, *(a for p in parents for a in ("-p", p)), "-m", message]
        done = await git(self.root, *argv, check=False)
        if done.ok and done.out:
            self.tip = done.out
            await git(self.root, "update-ref", TIP_REF, self.tip, check=False)

    async def _snapshot(self) -> str:
        """The work tree's tree now, as aidd's checkpoints record it (runtime files out, the
        feature metadata in even where .gitignore hides `.automaker/`: a retry elsewhere
        needs it), through an index of its own; "" when git failed."""
        index = self.root / ".git" / "aidd-fleet.index"
        store = CheckpointStore(self.root, "fleet", git_environ())
        try:
            return await asyncio.to_thread(store.tree, index)
        except CheckpointError:
            return ""
        finally:
            with contextlib.suppress(OSError):  # UnsafePathError: a link planted for .git
                unlink(self.root, index)


def _why(done: Done) -> str:
    """The line saying why a push failed: git's `!` verdict, else its last error line."""
    lines = [ln for ln in done.out.splitlines() if ln.startswith("!")] or done.err.splitlines()
    return " ".join(lines[-1].split())[:300] if lines else f"git push exited {done.code}"


def _rejected(porcelain: str) -> bool:
    """git's own verdict that the remote has commits this push lacks (`! ... [rejected]
    (fetch first)` or `(non-fast-forward)`); a hook's refusal or a lost network is not."""
    return any(line.startswith("!") and "[rejected]" in line for line in porcelain.splitlines())


@dataclass
class Publishing:
    """The activity's side: publish after each iteration_end (and once when aidd ended);
    a rejected push asks aidd to stop after its current attempt (`.stop`), as a graceful
    stop does. Each push is noted in the project's log on the worker."""

    publisher: Publisher | None  # None: a `path` project, nothing to publish
    name: str
    log: Path
    seen: int = 0  # the iteration_end count published for

    async def after_iteration(self, progress: Progress) -> Progress:
        """One commit per iteration that ended since the last look, in order, each its
        `NNN-end` checkpoint's tree when aidd recorded one (the default); the last without one
        is the work tree as it is now, an earlier one without one is left to the next."""
        if progress.ended <= self.seen:
            return progress
        ends = progress.ends or [str(progress.last_ended)]  # details of an older version
        first = progress.ended - len(ends) + 1  # the count of ends[0]
        for count in range(max(self.seen + 1, first), progress.ended + 1):
            number, _, tree = ends[count - first].partition(" ")
            if tree or count == progress.ended:
                progress = await self._publish(progress, f"iteration {number}", tree)
        self.seen = progress.ended
        return progress

    async def at_end(self, progress: Progress) -> Progress:
        """Once aidd ended: what its last iteration (if not yet published) and its end left,
        then the checkout settled on that commit."""
        moment = "end of run"
        if progress.ended > self.seen:
            self.seen = progress.ended
            moment = f"iteration {progress.last_ended}, {moment}"
        progress = await self._publish(progress, moment)
        if self.publisher is not None and not self.publisher.stale:
            await self.publisher.settle()
        return progress

    @property
    def stale(self) -> bool:
        return self.publisher is not None and self.publisher.stale

    async def _publish(self, progress: Progress, moment: str, exact: str = "") -> Progress:
        publisher = self.publisher
        if publisher is None or publisher.stale:
            return progress
        pushed = await publisher.publish(
            f"aidd fleet: {self.name}, {moment}\n\nattempt {progress.attempt} on "
            f"{progress.host}, aidd pid {progress.pid}", exact)
        if pushed is Push.REJECTED:
            paths = ProjectPaths(publisher.root)
            request_stop(paths.root, paths.stop, SystemClock().now())
        if pushed is not Push.NOTHING:
            self._note(publisher, pushed, moment)
        return replace(progress, pushed=publisher.head or progress.pushed)

    def _note(self, publisher: Publisher, pushed: Push, moment: str) -> None:
        what = {Push.PUSHED: f"pushed {publisher.head[:12]} to {publisher.branch}",
                Push.FAILED: f"push failed, tried again later: {publisher.error}",
                Push.REJECTED: f"push rejected, the branch moved on (a newer attempt); this "
                               f"attempt stops without overwriting it: {publisher.error}"}
        with self.log.open("a", encoding="utf-8") as sink:
            sink.write(f"aidd fleet: {moment}: {what[pushed]}\n")
