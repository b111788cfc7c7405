"""When the agent last changed a project file (issue 17): seen in a large tree too; aidd's own
files, `.git` and reads are not the agent's work."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from aidd.project import inotify
from aidd.project.activity import FileActivity
from tests.waiting import wait_for


def _watching(root: Path) -> FileActivity:
    files = FileActivity(root, time.monotonic)
    files.start()
    deadline = time.monotonic() + 30
    while files._observer is None and files.problem is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert files.problem is None
    return files


def _seen_within(files: FileActivity, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while files.last_change() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return files.last_change() is not None


def test_a_change_deep_in_a_large_tree_is_seen(tmp_path: Path) -> None:
    """17,000 directories: more than the kernel's event queue holds (watchdog's default mask
    overflowed it while adding its watches, and then saw nothing at all)."""
    for i in range(170):
        for j in range(100):
            os.makedirs(tmp_path / f"d{i}" / f"e{j}")
    files = _watching(tmp_path)
    try:
        (tmp_path / "d77" / "e7" / "result.txt").write_text("x")
        assert _seen_within(files, 5)
    finally:
        files.close()


def test_aidd_s_own_writes_and_reads_are_not_activity(tmp_path: Path) -> None:
    (tmp_path / ".automaker" / "iterations").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    (tmp_path / "src.py").write_text("x = 1\n")
    files = _watching(tmp_path)
    try:
        (tmp_path / ".automaker" / "iterations" / "001.log").write_text("log")
        (tmp_path / ".automaker" / "events.jsonl").write_text("{}\n")
        (tmp_path / ".automaker" / ".aidd-tmp-x1").write_text("tmp")
        (tmp_path / ".git" / "index").write_text("idx")
        (tmp_path / "src.py").read_text()
        assert not _seen_within(files, 1.5)
        (tmp_path / ".automaker" / "todo.md").write_text("- [ ] more\n")  # the agent's
        assert _seen_within(files, 5)
    finally:
        files.close()


def test_a_rename_out_of_the_tree_does_not_hold_the_proof_of_quiet(tmp_path: Path) -> None:
    """watchdog held every later event 0.5 s behind a rename it could not pair (issue 33): the
    marker of `quiet` too, so the next checkpoint took a snapshot it did not need. A rename
    still counts as a change."""
    root = tmp_path / "project"
    (root / ".automaker").mkdir(parents=True)
    files = _watching(root)
    try:
        deadline = time.monotonic() + 30
        while (count := files.quiet(1)) is None and time.monotonic() < deadline:
            pass
        (root / "notes.txt").write_text("x")
        (root / "notes.txt").rename(tmp_path / "notes.txt")  # never paired: out of the tree
        later = files.quiet(0.3)  # about 1 ms; 0.5 s behind the rename before
        assert later is not None
        assert count is not None
        assert later > count
        assert files.quiet(0.3) == later
    finally:
        files.close()


def test_quiet_s_marker_is_one_file_named_anew_each_time_and_gone_at_close(
        tmp_path: Path) -> None:
    """A new file costs ext4 here 0.3 to 0.9 ms, a new name ~10 us (issue 33): the marker is
    linked to its next name, never over a name already there, and removed at the end."""
    (tmp_path / ".automaker").mkdir()
    files = _watching(tmp_path)
    try:
        deadline = time.monotonic() + 30
        while files.quiet(1) is None and time.monotonic() < deadline:
            pass
        first = list((tmp_path / ".automaker").iterdir())
        assert len(first) == 1
        inode = first[0].stat().st_ino
        assert files.quiet(10) is not None
        second = list((tmp_path / ".automaker").iterdir())
        assert len(second) == 1
        assert second[0].name != first[0].name
        assert second[0].stat().st_ino == inode  # the same file: no new one made
        stem, _, number = second[0].name.rpartition("-")
        planted = tmp_path / ".automaker" / f"{stem}-{int(number) + 1}"
        planted.write_text("")  # the next name, there already: no proof from it
        assert files.quiet(10) is None
        kept = next(p for p in (tmp_path / ".automaker").iterdir() if p != planted)
        kept.unlink()
        kept.mkdir()  # the kept marker replaced: a new one made
        assert files.quiet(10) is not None
        kept.rmdir()
    finally:
        files.close()
    assert sorted(p.name for p in (tmp_path / ".automaker").iterdir()) == [planted.name]


def test_a_folder_moved_out_of_aidd_s_files_is_watched_at_its_new_place(tmp_path: Path) -> None:
    """Unheld (issue 33), a rename may reach watchdog's emitter in two halves: a folder moved
    from aidd's runtime files into the project must still count each later change in it
    (watched under its old name, it would be taken for aidd's own)."""
    root = tmp_path / "project"
    (root / ".automaker" / "iterations" / "scratch").mkdir(parents=True)
    seen: list[str] = []
    files = FileActivity(root, time.monotonic, seen.append)
    files.start()
    try:
        deadline = time.monotonic() + 30
        while (count := files.quiet(1)) is None and time.monotonic() < deadline:
            pass
        for turn in range(20):  # each turn one more chance for the halves to part
            (root / ".automaker" / "iterations" / "scratch").rename(root / "src")
            moved = files.quiet(10)
            (root / "src" / f"f{turn}.py").write_text("x")
            later = files.quiet(10)
            assert count is not None
            assert moved is not None
            assert later is not None
            assert moved > count
            assert later > moved
            assert str(root / "src" / f"f{turn}.py") in seen
            (root / "src").rename(root / ".automaker" / "iterations" / "scratch")
            count = files.quiet(10)
    finally:
        files.close()


def _watched_inodes() -> set[int]:
    """The inodes of this process's inotify watches, as the kernel lists them."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            text = Path(f"/proc/self/fdinfo/{fd}").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            fields = dict(f.split(":", 1) for f in line.split()[1:] if ":" in f)
            if line.startswith("inotify wd:"):
                inodes.add(int(fields["ino"], 16))
    return inodes


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify: Linux")
def test_the_kernel_watches_no_folder_of_git_or_aidd_and_each_folder_the_agent_makes(
        tmp_path: Path) -> None:
    """git's writes in `.git/` and aidd's in its runtime folders are never even queued to aidd
    (issue 33: watchdog received and dropped them, ~3 ms of GIL an iteration); a folder the
    agent makes, and one it makes inside at once, before the watch could be added, are
    watched and their files counted; a link is never followed."""
    root, outside = tmp_path / "project", tmp_path / "outside"
    left_out = [".git/objects/ab", ".git/refs/heads", ".automaker/iterations",
                ".automaker/audits/a1", ".automaker/checkpoints.git/refs"]
    for folder in [*left_out, ".automaker/features/f1", "src/pkg"]:
        (root / folder).mkdir(parents=True)
    (outside / "deep").mkdir(parents=True)
    (root / "link").symlink_to(outside, target_is_directory=True)
    held, release = threading.Event(), threading.Event()

    def seen(path: str) -> None:
        changed.append(path)
        if path.endswith("hold.txt"):
            held.set()
            release.wait(30)

    changed: list[str] = []
    files = FileActivity(root, time.monotonic, seen)
    files.start()
    try:
        deadline = time.monotonic() + 30
        while (count := files.quiet(1)) is None and time.monotonic() < deadline:
            pass
        watched = _watched_inodes()
        for folder in left_out:
            for path in (root / folder, *(root / folder).parents):
                if path in (root, root / ".automaker"):
                    break
                assert path.stat().st_ino not in watched, path
        assert outside.stat().st_ino not in watched
        assert (outside / "deep").stat().st_ino not in watched
        for folder in ("", ".automaker", ".automaker/features/f1", "src/pkg"):
            assert (root / folder).stat().st_ino in watched, folder
        (root / "hold.txt").write_text("x")
        assert held.wait(10)  # the watch's thread held: the next folders come before it looks
        (root / "made" / "inside").mkdir(parents=True)
        (root / "made" / "inside" / "new.py").write_text("x")
        release.set()
        later = files.quiet(10)
        assert later is not None
        assert count is not None
        assert later > count
        assert str(root / "made" / "inside" / "new.py") in changed
        for folder in ("made", "made/inside"):
            assert (root / folder).stat().st_ino in _watched_inodes(), folder
        changed.clear()
        (root / "made" / "inside" / "new.py").write_text("y")
        (root / ".git" / "objects" / "ab" / "cdef").write_text("git's")
        (root / ".automaker" / "iterations" / "001.log").write_text("aidd's")
        (root / "link" / "deep" / "elsewhere.txt").write_text("not the project's")
        again = files.quiet(10)
        assert again is not None
        assert again > later
        assert changed == [str(root / "made" / "inside" / "new.py")] * len(changed)
        assert changed
    finally:
        release.set()
        files.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify: Linux")
def test_the_guard_s_watch_of_automaker_leaves_out_aidd_s_folders_in_it(tmp_path: Path) -> None:
    """Without --liveness signals only `.automaker/` is watched (the feature guard): the logs
    aidd writes in `.automaker/iterations` all through an attempt are no event of it."""
    for folder in ("iterations", "audits", "features/f1"):
        (tmp_path / ".automaker" / folder).mkdir(parents=True)
    files = FileActivity(tmp_path / ".automaker", time.monotonic, project=tmp_path)
    files.start()
    try:
        deadline = time.monotonic() + 30
        while files._observer is None and time.monotonic() < deadline:  # set after the walk
            time.sleep(0.02)
        watched = _watched_inodes()
        assert (tmp_path / ".automaker" / "features" / "f1").stat().st_ino in watched
        for folder in ("iterations", "audits"):
            assert (tmp_path / ".automaker" / folder).stat().st_ino not in watched, folder
    finally:
        files.close()


def _inotify_fds() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            count += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
    return count


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify: Linux")
def test_past_the_watch_limit_the_signal_is_absent(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    real = inotify._libc()

    class _Full:
        inotify_init1 = real.inotify_init1

        @staticmethod
        def inotify_add_watch(fd: int, path: bytes, mask: int) -> int:
            ctypes.set_errno(errno.ENOSPC)
            return -1

    before = _inotify_fds()
    monkeypatch.setattr(inotify, "_libc", _Full)
    files = FileActivity(tmp_path, time.monotonic)
    files.start()
    try:
        wait_for(lambda: files.problem is not None, 30, "the watch given up")
        assert files.problem == "cannot watch the project's files: inotify watch limit reached"
        (tmp_path / "a.txt").write_text("x")
        assert files.quiet(1) is None
        assert files.last_change() is None
        wait_for(lambda: _inotify_fds() == before, 10, "the descriptor closed")
    finally:
        files.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify: Linux")
def test_closing_mid_walk_ends_the_walk_and_frees_the_descriptor(tmp_path: Path) -> None:
    for i in range(40):
        for j in range(50):
            (tmp_path / f"d{i}" / f"e{j}").mkdir(parents=True)
    before = _inotify_fds()
    for _ in range(3):
        files = FileActivity(tmp_path, time.monotonic)
        files.start()
        files.close()  # at once: mid-walk, or before it began
        wait_for(lambda: _inotify_fds() == before, 30, "the descriptor closed")
    files = _watching(tmp_path)
    wait_for(lambda: _inotify_fds() == before + 1, 30, "the watch")
    files.close()  # reading: woken, never waited on
    wait_for(lambda: _inotify_fds() == before, 30, "the descriptor closed")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify: Linux")
def test_a_folder_moved_inside_is_named_anew_and_one_moved_out_is_let_go(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".automaker").mkdir(parents=True)
    (root / "a" / "b").mkdir(parents=True)
    changed: list[str] = []
    files = FileActivity(root, time.monotonic, changed.append)
    files.start()
    try:
        wait_for(lambda: files.quiet(1) is not None, 30, "the watch of the project")
        (root / "a").rename(root / "c")
        assert files.quiet(10) is not None
        (root / "c" / "b" / "f.py").write_text("x")
        assert files.quiet(10) is not None
        assert str(root / "c" / "b" / "f.py") in changed
        assert not [path for path in changed if path.startswith(str(root / "a"))]
        inodes = {(root / "c").stat().st_ino, (root / "c" / "b").stat().st_ino}
        assert inodes <= _watched_inodes()
        (root / "c").rename(tmp_path / "gone")  # out of the tree
        count = files.quiet(10)
        assert count is not None
        (tmp_path / "gone" / "b" / "g.py").write_text("x")
        assert files.quiet(10) == count
        assert not inodes & _watched_inodes()
        assert not [path for path in changed if path.endswith("g.py")]
    finally:
        files.close()
