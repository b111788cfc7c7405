"""git as the user of a test repository runs it: an identity of its own, stdout back, and a
failed command fails the test."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TypeVar, cast

import pytest

from aidd.project.git import Done, Git

T = TypeVar("T")

_USER = {"GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x", "GIT_COMMITTER_NAME": "u",
         "GIT_COMMITTER_EMAIL": "u@x"}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env={**os.environ, **_USER},
                          capture_output=True, text=True, check=True).stdout


def spy_git(monkeypatch: pytest.MonkeyPatch, seen: Callable[[Git, list[str]], T | None]
            ) -> list[T]:
    """What `seen` makes of each git run aidd starts from now on (its Git, its argv), where
    it makes something."""
    runs: list[T] = []
    real = Git._exec

    def spy(self: Git, argv: list[str], stdin: bytes | None) -> Done:
        if (found := seen(self, argv)) is not None:
            runs.append(found)
        return real(self, argv, stdin)

    monkeypatch.setattr(Git, "_exec", spy)
    return runs


def spy_reads(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> list[str]:
    """The names of the files `module` reads through its `read_file` from now on, settled at
    once (no racy window: a file written a moment ago counts as unchanged while its stat is)."""
    from aidd.project import gitlayout

    monkeypatch.setattr(gitlayout, "_RACY_NS", 0)
    reads: list[str] = []
    real = module.read_file

    def read_file(top: Path, path: Path, limit: int) -> bytes:
        reads.append(path.name)
        return cast(bytes, real(top, path, limit))

    monkeypatch.setattr(module, "read_file", read_file)
    return reads
