"""A git project's work, published after each iteration: the worker's checkout commits what
changed on the project's branch (as `aidd fleet`, aidd's runtime files left out) and pushes it
without force, so a retry on any worker resumes from it. A push the remote rejects because its
branch moved on (a newer attempt pushed) makes this attempt stale: it never overwrites."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path

from aidd.clock import SystemClock
from aidd.fleet.gitrun import Done, git, revision
from aidd.fleet.records import Progress
from aidd.project.paths import ProjectPaths
from aidd.project.stop import request_stop


class Push(Enum):
    NOTHING = "nothing"  # no change, nothing unpushed
    PUSHED = "pushed"
    REJECTED = "rejected"  # the remote branch moved on: this attempt is stale
    FAILED = "failed"  # git or the network failed: tried again after the next iteration


@dataclass
class Publisher:
    """Commits and pushes one checkout's work to `branch` of its `origin`."""

    root: Path
    branch: str
    stale: bool = False
    head: str = ""  # the last commit pushed
    error: str = ""  # why the last push failed

    async def publish(self, message: str) -> Push:
        if self.stale:
            return Push.REJECTED
        committed = await self._commit(message)
        head = await revision(self.root, "HEAD")
        if not committed and head == await revision(self.root, self._tracking):
            return Push.NOTHING
        done = await git(self.root, "push", "--porcelain", "origin",
                         f"HEAD:refs/heads/{self.branch}", check=False)
        if done.ok:
            self.head, self.error = head, ""
            return Push.PUSHED
        self.error = _why(done)
        if _rejected(done.out):
            self.stale = True
            return Push.REJECTED
        return Push.FAILED

    @property
    def _tracking(self) -> str:
        return f"refs/remotes/origin/{self.branch}"

    async def _commit(self, message: str) -> bool:
        """Commit every change of the work tree; False when there was none (or git failed:
        the next iteration tries again)."""
        if not (await git(self.root, "add", "--all", check=False)).ok:
            return False
        if (await git(self.root, "diff", "--cached", "--quiet", check=False)).ok:
            return False
        done = await git(self.root, "commit", "--quiet", "--no-verify", "-m", message,
                         check=False)
        return done.ok


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
        if progress.ended <= self.seen:
            return progress
        self.seen = progress.ended
        return await self._publish(progress, f"iteration {progress.last_ended}")

    async def at_end(self, progress: Progress) -> Progress:
        """Once aidd ended: what its last iteration (if not yet published) and its end left."""
        moment = "end of run"
        if progress.ended > self.seen:
            self.seen = progress.ended
            moment = f"iteration {progress.last_ended}, {moment}"
        return await self._publish(progress, moment)

    @property
    def stale(self) -> bool:
        return self.publisher is not None and self.publisher.stale

    async def _publish(self, progress: Progress, moment: str) -> Progress:
        publisher = self.publisher
        if publisher is None or publisher.stale:
            return progress
        pushed = await publisher.publish(
            f"aidd fleet: {self.name}, {moment}\n\nattempt {progress.attempt} on "
            f"{progress.host}, aidd pid {progress.pid}")
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
