"""The project-file primitives (aidd/fsio.py): links, hard links and FIFOs refused, crash files
never overwritten and never left empty (issue 13 items 1, 7, 13)."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path, PurePath

import pytest

from aidd import fsio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "proj" / ".automaker").mkdir(parents=True)
    return tmp_path / "proj"


def test_crash_files_never_overwrite_each_other(root: Path) -> None:
    first = fsio.write_crash_file(root, "one")
    second = fsio.write_crash_file(root, "two")
    assert first is not None
    assert second is not None
    assert first != second
    assert (first.read_text(), second.read_text()) == ("one", "two")


def test_a_crash_file_that_cannot_be_written_whole_is_not_left_behind(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fsio.write, "write_all", full)
    assert fsio.write_crash_file(root, "lost") is None
    assert not list((root / ".automaker").glob("aidd-crash-*"))


def test_writes_refuse_links_fifos_and_dirs_that_lead_out(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    (root / ".automaker" / "link").symlink_to(outside)
    os.link(outside, root / ".automaker" / "hard")
    os.mkfifo(root / ".automaker" / "fifo")
    (root / "sub").symlink_to(tmp_path)
    for name in ("link", "hard", "fifo"):
        with pytest.raises(fsio.UnsafePathError):
            os.close(fsio.open_append(root, root / ".automaker" / name))
    with pytest.raises(fsio.UnsafePathError):
        fsio.write_atomic(root / "sub" / "outside.txt", "x", root=root)
    fsio.write_atomic(root / ".automaker" / "link", "replaced", root=root)
    assert outside.read_text() == "keep"
    assert (root / ".automaker" / "link").read_text() == "replaced"


def test_reads_stay_inside_the_project_and_below_the_cap(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    (root / "in.txt").write_text("fine")
    (root / "inner").symlink_to(root / "in.txt")
    (root / "out").symlink_to(outside)
    os.mkfifo(root / "fifo")
    assert fsio.read_file(root, root / "inner", 100) == b"fine"
    with pytest.raises(fsio.UnsafePathError):
        fsio.read_file(root, root / "out", 100)
    with pytest.raises(fsio.UnsafePathError):
        fsio.read_file(root, root / "fifo", 100)
    with pytest.raises(fsio.FileTooLargeError):
        fsio.read_file(root, root / "in.txt", 2)


def test_a_stream_is_opened_with_the_same_checks(root: Path, tmp_path: Path) -> None:
    """`open_read`, for readers that stream or read a part (logs, the events' tail): a link
    inside is followed, a link out or a FIFO refused without blocking."""
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    (root / "in.txt").write_text("fine")
    (root / "inner").symlink_to(root / "in.txt")
    (root / "out").symlink_to(outside)
    os.mkfifo(root / "fifo")
    with fsio.open_read(root, root / "inner") as file:
        assert file.read() == b"fine"
    for name in ("out", "fifo"):
        with pytest.raises(fsio.UnsafePathError):
            fsio.open_read(root, root / name)


def test_a_read_resolves_the_root_only_when_it_is_given_through_a_link(
        root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: each read of a project file resolved the project (an lstat per component);
    a file found below the root as given needs none, a root given through a link still
    is resolved (and a file through it read), a link out still refused."""
    root = root.resolve()
    (root / "in.txt").write_text("fine")
    (root / "out").symlink_to(tmp_path / "elsewhere.txt")
    (tmp_path / "elsewhere.txt").write_text("secret")
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    resolved: list[object] = []
    realpath = os.path.realpath
    monkeypatch.setattr(os.path, "realpath",
                        lambda path, **kw: resolved.append(path) or realpath(path, **kw))
    assert fsio.read_file(root, root / "in.txt", 100) == b"fine"
    assert resolved == []
    assert fsio.read_file(alias, alias / "in.txt", 100) == b"fine"
    assert resolved == [alias]
    with pytest.raises(fsio.UnsafePathError):
        fsio.read_file(root, root / "out", 100)


def test_a_folder_is_opened_without_making_paths_and_a_refusal_names_it(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: each folder on the way made a Path for a message rarely said (~25 an
    iteration); the message is made when it is said, and still names the folder."""
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "link").symlink_to(root / "a" / "b")
    joined: list[object] = []
    truediv = PurePath.__truediv__
    monkeypatch.setattr(PurePath, "__truediv__",
                        lambda self, key: joined.append(key) or truediv(self, key))
    os.close(fsio.open_dir(root, Path("a/b")))
    assert joined == []
    with pytest.raises(fsio.UnsafePathError, match=re.escape(f"{root}/a/link: is a symlink")):
        fsio.open_dir(root, "a/link/c")
    with pytest.raises(fsio.UnsafePathError, match=re.escape(f"{root}/a/..")):
        fsio.open_dir(root, "a/../b")


def test_a_file_placed_from_its_own_folder_opens_it_once(root: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: status.md and a prompt are placed from a temp file in their own folder, which
    was opened twice, and the temp name removed after the rename had taken it. A link (never
    over a name that is there) still leaves no temp file."""
    opened: list[object] = []
    unlinked: list[object] = []
    real_open, real_unlink = os.open, os.unlink
    monkeypatch.setattr(os, "open", lambda path, *a, **kw: opened.append(path)
                        or real_open(path, *a, **kw))
    monkeypatch.setattr(os, "unlink", lambda path, **kw: unlinked.append(path)
                        or real_unlink(path, **kw))
    folder = root / ".automaker"
    assert fsio.place(root, folder, folder / "status.md", b"one", 0o644, replace=True)
    assert (opened.count(".automaker"), unlinked) == (1, [])
    assert not fsio.place(root, folder, folder / "status.md", b"two", 0o644, replace=False)
    assert fsio.place(root, folder, folder / "new.md", b"three", 0o644, replace=False)
    assert [(p.name, p.read_bytes()) for p in sorted(folder.iterdir())] == [
        ("new.md", b"three"), ("status.md", b"one")]


def test_atomic_file_replaces_on_success_keeps_the_old_file_otherwise(root: Path) -> None:
    target = root / ".automaker" / "big.bin"
    target.write_bytes(b"old")
    target.chmod(0o640)
    inode = target.stat().st_ino
    with fsio.atomic_file(root, target) as out:
        out.discard()
    with pytest.raises(RuntimeError):
        _write_then_fail(root, target)
    assert (target.read_bytes(), target.stat().st_ino) == (b"old", inode)
    with fsio.atomic_file(root, target) as out:
        for _ in range(3):
            out.file.write(b"chunk ")
        out.times_ns = (1_000_000_000, 2_000_000_000)
    info = target.stat()
    assert target.read_bytes() == b"chunk chunk chunk "
    assert (info.st_mode & 0o777, info.st_mtime_ns) == (0o640, 2_000_000_000)
    assert sorted(p.name for p in target.parent.iterdir()) == ["big.bin"]  # no temp file left


def _write_then_fail(root: Path, target: Path) -> None:
    with fsio.atomic_file(root, target) as out:
        out.file.write(b"half")
        raise RuntimeError
