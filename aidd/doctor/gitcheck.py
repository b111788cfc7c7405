"""git for checkpoints: the program, the repository the project is in (and its state), and
whether a run can record checkpoints there. Only reads; git runs bounded and isolated
(project/git): nothing the project's config names runs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from aidd.config import Settings
from aidd.doctor.findings import Finding, ok, skip, warn
from aidd.doctor.place import existing_parent
from aidd.project.checkpoints import PRIVATE_REPO
from aidd.project.git import Git, GitError, which
from aidd.project.gitlayout import own_problem

_TIMEOUT_S = 15
# Operations left half done in the repository: the agent would commit into the middle of one.
_IN_PROGRESS = {"MERGE_HEAD": "a merge", "rebase-merge": "a rebase", "rebase-apply": "a rebase",
                "CHERRY_PICK_HEAD": "a cherry-pick", "REVERT_HEAD": "a revert",
                "BISECT_LOG": "a bisect"}


@dataclass(frozen=True)
class Repo:
    git_dir: Path
    top: Path
    refused: str | None  # why it may keep no checkpoints (its layout leads outside)


def check_git(settings: Settings) -> list[Finding]:
    """The findings `git`, `repository` and `checkpoints`."""
    env = settings.environ
    root = settings.project_dir
    git = which(env)
    if git is None:
        return [warn("git", "git is not on PATH: a run records no checkpoint",
                     "install git (or pass --no-checkpoints to say you mean it)"),
                skip("repository", "needs git"), _checkpoints(settings, None, False)]
    here = existing_parent(root)  # a project dir a run will create joins its parent's repo
    version = _git(env, here, "--version") or "git (version unknown)"
    repo = _repo(env, here)
    return [ok("git", f"{version} at {git}"), _repository(env, here, repo),
            _checkpoints(settings, repo, True)]


def _repo(env: Mapping[str, str], root: Path) -> Repo | None:
    out = _git(env, root, "rev-parse", "--absolute-git-dir", "--show-toplevel")
    lines = out.splitlines() if out else []
    if len(lines) != 2:
        return None
    # A project the enclosing repository ignores gets the private one (as checkpoints do).
    ignored = Path(lines[1]).resolve() != root.resolve() and _git(
        env, root, "check-ignore", "-q", "--", ".") is not None
    return None if ignored else Repo(Path(lines[0]), Path(lines[1]), own_problem(
        root, Path(lines[1]), Path(lines[0])))


def _repository(env: Mapping[str, str], root: Path, repo: Repo | None) -> Finding:
    if repo is None:
        return ok("repository", "not in a git work tree: checkpoints go to a private "
                  f"repository, {PRIVATE_REPO}")
    busy = [what for name, what in _IN_PROGRESS.items() if (repo.git_dir / name).exists()]
    if busy:
        return warn("repository", f"{repo.top}: {busy[0]} is in progress",
                    "finish or abort it before a run (git status says how)")
    branch = _git(env, root, "symbolic-ref", "--quiet", "--short", "HEAD")
    status = _git(env, root, "status", "--porcelain", "--untracked-files=normal")
    changed = len(status.splitlines()) if status is not None else None
    where = f"on branch {branch}" if branch else "HEAD detached"
    dirty = "" if changed is None else (f", {changed} changed or untracked paths" if changed
                                        else ", clean")
    return ok("repository", f"{repo.top}, {where}{dirty}")


def _checkpoints(settings: Settings, repo: Repo | None, has_git: bool) -> Finding:
    if settings.no_checkpoints:
        return skip("checkpoints", "off (--no-checkpoints)")
    if not has_git:
        return warn("checkpoints", "not possible without git", "install git")
    if repo is not None:
        return _in_repository(repo)
    where = existing_parent(settings.project_dir / PRIVATE_REPO)
    if not os.access(where, os.W_OK | os.X_OK):
        return warn("checkpoints", f"{where} is not writable: a run records no checkpoint",
                    "fix its permissions, or pass --no-checkpoints")
    return ok("checkpoints", f"possible, in {PRIVATE_REPO}")


def _in_repository(repo: Repo) -> Finding:
    if repo.refused is not None:
        return warn("checkpoints", f"off: {repo.refused}", "make .git a plain folder of the "
                    "project (a run records no checkpoint otherwise)")
    if not os.access(repo.git_dir, os.W_OK | os.X_OK):
        return warn("checkpoints", f"{repo.git_dir} is not writable: a run records no "
                    "checkpoint", "fix its permissions, or pass --no-checkpoints")
    return ok("checkpoints", f"possible, as private refs in {repo.git_dir}")


def _git(env: Mapping[str, str], cwd: Path, *args: str) -> str | None:
    """git's stdout, stripped; None when it fails or takes too long."""
    try:
        done = Git(cwd, env, timeout=_TIMEOUT_S).run(*args)
    except GitError:
        return None
    return done.out.decode("utf-8", "replace").strip() if done.ok else None
