"""The stuck-detection fingerprint (SUP-70), on real git work trees and plain directories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from aidd.project.fingerprint import fingerprint


@pytest.fixture(autouse=True)
def _no_outer_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))


def git(root: Path, *argv: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *argv], cwd=root,
                   check=True, capture_output=True)


def touch(path: Path, text: str, mtime_ns: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, ns=(mtime_ns, mtime_ns))


@pytest.fixture(params=["root", "subdir"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A committed project: the repository itself, or a directory inside a larger one."""
    repo = tmp_path / "repo"
    root = repo if request.param == "root" else repo / "app"
    root.mkdir(parents=True)
    (root / "main.py").write_text("print(1)\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    return root


def test_automaker_writes_are_not_changes(project: Path) -> None:
    before = fingerprint(project, os.environ)
    touch(project / ".automaker" / "iterations" / "001.log", "log", 1)
    touch(project / ".automaker" / "status.md", "status", 2)
    assert fingerprint(project, os.environ) == before


def test_every_edit_of_an_already_modified_file_is_a_change(project: Path) -> None:
    touch(project / "main.py", "print(2)\n", 10**18)
    first = fingerprint(project, os.environ)
    touch(project / "main.py", "print(3)\n", 10**18 + 10**9)
    assert fingerprint(project, os.environ) != first


def test_a_new_untracked_file_and_a_commit_are_changes(project: Path) -> None:
    before = fingerprint(project, os.environ)
    touch(project / "new.py", "x", 5)
    untracked = fingerprint(project, os.environ)
    assert untracked != before
    git(project, "add", "-A")
    git(project, "commit", "-qm", "more")
    assert fingerprint(project, os.environ) not in (before, untracked)


def test_outside_git_the_tree_is_hashed(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    touch(root / "src" / "a.txt", "a", 1)
    before = fingerprint(root, os.environ)
    touch(root / ".automaker" / "x.log", "x", 2)
    touch(root / "node_modules" / "m.js", "m", 3)
    assert fingerprint(root, os.environ) == before
    touch(root / "src" / "a.txt", "b", 4)
    assert fingerprint(root, os.environ) != before
