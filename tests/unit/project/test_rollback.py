"""Rollback to a checkpoint with real git: every byte back (untracked files too), what the
agent added removed, ignored and runtime files left alone, the user's HEAD, index and stash
untouched, and the rollback itself undoable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aidd.project.checkpoints import CheckpointError, CheckpointStore
from aidd.project.rollback import BEFORE, roll_back
from tests.gitrepo import git
from tests.unit.project.test_checkpoints import user_state

RUN = "20261125T010000Z-42"


def tree(root: Path) -> dict[str, bytes]:
    """Every file under root but the checkpoints' own store and .git."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith((".git/", ".automaker/checkpoints")):
            out[rel] = path.read_bytes()
    return out


def project(tmp_path: Path, with_git: bool) -> Path:
    root = tmp_path / "shop"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("v1\n")
    (root / "notes.txt").write_text("untracked\n")
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "cache").write_text("ignored v1\n")
    auto = root / ".automaker"
    (auto / "features" / "feature-1-a").mkdir(parents=True)
    (auto / "features" / "feature-1-a" / "feature.json").write_text('{"passes": false}\n')
    (auto / "todo.md").write_text("- [ ] a\n")
    (auto / "iterations").mkdir()
    if with_git:
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "src", ".gitignore")
        git(root, "commit", "-qm", "first")
    return root


def wreck(root: Path) -> None:
    (root / "src" / "app.py").write_text("broken\n")
    (root / "notes.txt").unlink()
    (root / "junk" / "deep").mkdir(parents=True)
    (root / "junk" / "deep" / "x.bin").write_bytes(b"\x00\xff")
    (root / ".automaker" / "features" / "feature-1-a" / "feature.json").write_text(
        '{"passes": true}\n')
    (root / "build" / "cache").write_text("ignored v2\n")
    (root / ".automaker" / "iterations" / "001.log").write_text("log\n")


@pytest.mark.parametrize("with_git", [True, False], ids=["git", "plain"])
def test_rollback_restores_every_byte_and_can_be_undone(tmp_path: Path, with_git: bool) -> None:
    root = project(tmp_path, with_git)
    before = tree(root)
    user = user_state(root) if with_git else ()
    CheckpointStore(root, RUN, os.environ).record("001")
    wreck(root)
    wrecked = tree(root)
    done = roll_back(CheckpointStore(root, "20261125T020000Z-43", os.environ), "001")
    assert done.target.endswith(f"{RUN}/001")
    assert sorted(done.restored) == [".automaker/features/feature-1-a/feature.json",
                                     "notes.txt", "src/app.py"]
    assert done.removed == ("junk/deep/x.bin",)
    after = tree(root)
    assert after == {**before, "build/cache": b"ignored v2\n",  # ignored: left alone
                     ".automaker/iterations/001.log": b"log\n"}  # runtime: left alone
    assert not (root / "junk").exists()
    if with_git:
        assert user_state(root)[:4] == user[:4]  # HEAD, branch, index, stash
    undo = roll_back(CheckpointStore(root, "20261125T030000Z-44", os.environ), BEFORE)
    assert undo.target == done.saved
    assert tree(root) == wrecked


def test_an_unknown_checkpoint_is_a_clear_error(tmp_path: Path) -> None:
    root = project(tmp_path, with_git=False)
    CheckpointStore(root, RUN, os.environ).record("001")
    with pytest.raises(CheckpointError, match="no checkpoint named '007'"):
        roll_back(CheckpointStore(root, "x", os.environ), "007")
