"""Issue 33: a checkpoint's trees written by aidd from the index `git add` left, in place of a
`git write-tree` run. Each tree must be the one git writes from the same index, and anything
the reader does not take leaves the tree to git."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from aidd.project import gittrees
from aidd.project.checkpoints import INDEX, CheckpointStore
from aidd.project.gitobjects import Objects
from aidd.project.gittrees import IndexTrees
from tests.gitrepo import git
from tests.unit.project.test_checkpoints import RUN

NAMES = ("a", "b", "c d", "ü", "x.log", "e", "e.txt", "e-f")  # "e." and "e-" sort before "e/"


def git_tree(root: Path, index: Path) -> str:
    """The tree git writes from a copy of `index` (write-tree rewrites the index it reads)."""
    copy = index.with_name("copy.index")
    shutil.copyfile(index, copy)
    try:
        return subprocess.run(["git", "write-tree"], cwd=root, check=True, text=True,
                              capture_output=True,
                              env={**os.environ, "GIT_INDEX_FILE": str(copy)}).stdout.strip()
    finally:
        copy.unlink()


def spy_written(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """For each tree aidd tried to write itself: whether it did (False: git wrote it)."""
    tries: list[bool] = []
    real = IndexTrees.write

    def write(self: IndexTrees, names: list[str]) -> str | None:
        tree = real(self, names)
        tries.append(tree is not None)
        return tree

    monkeypatch.setattr(IndexTrees, "write", write)
    return tries


def shuffle_tree(root: Path, rng: random.Random) -> None:
    """A few random edits: files written, removed, made executable, made links, folders made
    where files were and files where folders were, ignored files."""
    for _ in range(rng.randint(0, 4)):
        path = root.joinpath(*(rng.choice(NAMES) for _ in range(rng.randint(1, 4))))
        edit = rng.choice(("write", "write", "write", "remove", "chmod", "link", "folder"))
        try:
            if edit == "chmod":
                if path.is_file() and not path.is_symlink():
                    path.chmod(path.stat().st_mode ^ 0o100)
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.is_symlink() or path.exists():
                path.unlink()
            if edit == "folder":
                path.mkdir(parents=True)
                path = path / rng.choice(NAMES)
            path.parent.mkdir(parents=True, exist_ok=True)
            if edit == "link":
                path.symlink_to(rng.choice(NAMES))
            elif edit != "remove":
                path.write_text(str(rng.random()))
        except OSError:  # a link or a file on the way: the next edit
            pass


@pytest.mark.parametrize("form", ["sha1", "sha256"])
def test_every_tree_aidd_writes_is_the_one_git_writes_from_the_same_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str) -> None:
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", f"--object-format={form}")
    (root / ".gitignore").write_text("*.log\n")
    (root / "first.txt").write_text("1\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    tries = spy_written(monkeypatch)
    store = CheckpointStore(root, RUN, os.environ)
    rng = random.Random(33)
    for step in range(120):
        shuffle_tree(root, rng)
        if step == 60:  # a nested repository: a gitlink, its commit moved later
            sub = root / "sub"
            sub.mkdir()
            git(sub, "init", "-q", f"--object-format={form}")
            git(sub, "commit", "-q", "--allow-empty", "-m", "one")
        if step == 90:
            git(root / "sub", "commit", "-q", "--allow-empty", "-m", "two")
        point = store.record(f"{step:03d}")
        assert point.tree == git_tree(root, root / INDEX), step
    assert len(tries) > 40
    assert sum(tries) >= len(tries) - 3  # git wrote a gitlink's (`add -v` names `sub/`)
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=root,
                          capture_output=True, text=True, check=False)
    assert fsck.returncode == 0, fsck.stderr


def test_a_folder_become_a_link_and_a_file_become_a_folder_are_written_by_aidd(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder become a link to itself: `git add -v` names the link only (its files cannot
    be looked at: ELOOP), and git drops what the folder held with no word of it."""
    root = tmp_path / "shop"
    (root / "lib" / "deep").mkdir(parents=True)
    for name in ("lib/a.py", "lib/deep/b.py", "lib.txt", "conf"):
        (root / name).write_text(name)
    git(root, "init", "-q")
    store = CheckpointStore(root, RUN, os.environ)
    store.record("001")
    tries = spy_written(monkeypatch)
    shutil.rmtree(root / "lib")
    (root / "lib").symlink_to("lib")
    assert store.record("001-end").tree == git_tree(root, root / INDEX)
    (root / "lib").unlink()
    (root / "lib").mkdir()
    (root / "lib" / "c.py").write_text("c\n")
    assert store.record("002").tree == git_tree(root, root / INDEX)
    assert tries == [True, True]


def test_a_path_deeper_than_the_reader_takes_is_left_to_git(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "deep"
    root.mkdir()
    git(root, "init", "-q")
    store = CheckpointStore(root, RUN, os.environ)
    store.record("001")
    tries = spy_written(monkeypatch)
    deep = root.joinpath(*["d"] * (gittrees._DEPTH + 5))
    deep.mkdir(parents=True)
    (deep / "leaf").write_text("x\n")
    (root / "top.txt").write_text("y\n")
    end = store.record("001-end")
    assert tries == [False]
    assert end.tree == git_tree(root, root / INDEX)
    (root / "top.txt").write_text("z\n")
    assert store.record("002").tree == git_tree(root, root / INDEX)
    shutil.rmtree(root / "d")
    assert store.record("003").tree == git_tree(root, root / INDEX)
    (root / "top.txt").write_text("w\n")  # held again, from the index git wrote last
    assert store.record("004").tree == git_tree(root, root / INDEX)
    assert tries == [False, False, False, True]


def real_index(tmp_path: Path) -> tuple[Path, bytes, str]:
    """A repository, its index (version 2, as git writes one) and the index's tree."""
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q")
    for name in ("a.txt", "d/b.txt", "d/e/c.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    git(root, "add", "-A")
    return root, (root / ".git" / "index").read_bytes(), git(root, "write-tree").strip()


def trees_of(root: Path) -> IndexTrees:
    return IndexTrees(root, root / ".git" / "index", Objects(root, root / ".git"))


def test_an_index_the_reader_does_not_take_is_not_held(tmp_path: Path) -> None:
    root, index, tree = real_index(tmp_path)
    assert trees_of(root).load(index, tree)
    assert not trees_of(root).load(index, "0" * 40)  # another tree than the checkpoint's
    version3 = index[:7] + b"\3" + index[8:]
    assert not trees_of(root).load(version3, tree)
    flagged = bytearray(index)
    flagged[12 + 60] |= 0x80  # the first entry marked assume-valid
    assert not trees_of(root).load(bytes(flagged), tree)
    short = index[:8] + (5).to_bytes(4, "big") + index[12:]  # more entries than it holds
    assert not trees_of(root).load(short, tree)


def test_an_index_of_more_paths_than_the_reader_holds_is_git_s(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, index, tree = real_index(tmp_path)  # 3 paths
    monkeypatch.setattr(gittrees, "_ENTRIES", 2)
    assert not trees_of(root).load(index, tree)
    monkeypatch.setattr(gittrees, "_ENTRIES", 3)
    assert trees_of(root).load(index, tree)


def test_an_update_that_does_not_add_up_is_refused_and_the_trees_let_go(
        tmp_path: Path) -> None:
    root, index, tree = real_index(tmp_path)
    trees = trees_of(root)
    assert trees.load(index, tree)
    written: list[bytes] = []
    # The index says 3 entries; a path named as gone that is still there is found, not dropped.
    assert trees.update(index, [b"d/b.txt"], written.append) == tree
    lying = index[:8] + (4).to_bytes(4, "big") + index[12:]
    assert trees.update(lying, [b"a.txt"], written.append) is None
    assert trees.tree is None
    assert trees.update(index, [b"a.txt"], written.append) is None  # not held: load first
    (root / "d" / "e" / "c.txt").unlink()
    git(root, "add", "-A")
    after = (root / ".git" / "index").read_bytes()
    assert trees.load(index, tree)
    written.clear()
    assert trees.update(after, [b"d/e/c.txt"], written.append) == git(root, "write-tree").strip()
    assert [raw.split(b" ", 1)[0] for raw in written] == [b"tree", b"tree"]  # d/ and the top
