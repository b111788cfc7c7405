"""Issue 33: a checkpoint's commit and ref written by aidd itself, its changed files from its
`git add -v`; the git runs an attempt costs, and what a kill -9 mid-write leaves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from aidd.project.activity import FileActivity
from aidd.project.checkpoints import CheckpointStore
from tests.gitrepo import git, spy_reads
from tests.unit.project.test_checkpoints import RUN, _git_runs, files_at
from tests.waiting import wait_for

TMP = Path("aidd") / "tmp"  # below the git directory (project/gitobjects)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "app.py").write_text("v1\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    return root


@pytest.mark.parametrize("private", [False, True], ids=["git", "plain"])
def test_an_attempt_costs_one_git_run_once_the_run_is_going(
        repo: Path, tmp_path: Path, private: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "plain" if private else repo
    root.mkdir(exist_ok=True)
    store = CheckpointStore(root, RUN, os.environ)
    store.record("001")
    (root / "app.py").write_text("v2\n")
    store.record("001-end")
    runs = _git_runs(monkeypatch)
    start = store.record("002")  # nothing changed since 001-end: `add` alone proves it
    assert [r[0] for r in runs] == ["add"]
    (root / "app.py").write_text("v3\n")
    (root / "new.py").write_text("new\n")
    end = store.record("002-end")
    # No write-tree (project/gittrees), commit-tree, diff-tree.
    assert [r[0] for r in runs] == ["add", "add"]
    assert store.changed_paths(start, end) == ["app.py", "new.py"]
    assert files_at(root, end.ref, None if not private else root / ".automaker/checkpoints.git"
                    ) == {"app.py": "v3\n", "new.py": "new\n"}


def test_the_commits_aidd_writes_are_valid_and_the_same_in_a_sha256_repository(
        tmp_path: Path) -> None:
    for form in ("sha1", "sha256"):
        root = tmp_path / form
        root.mkdir()
        git(root, "init", "-q", f"--object-format={form}")
        (root / "a.txt").write_text("1\n")
        (root / "ü x.txt").write_text("u\n")
        store = CheckpointStore(root, RUN, os.environ)
        first = store.record("001")
        (root / "a.txt").write_text("2\n")
        (root / "ü x.txt").unlink()
        end = store.record("001-end")
        assert end.files == 2
        assert store.changed_paths(first, end) == ["a.txt", "ü x.txt"]
        assert git(root, "rev-parse", f"{end.ref}^") == first.commit + "\n"
        assert files_at(root, end.ref) == {"a.txt": "2\n"}
        assert git(root, "log", "-1", "--format=%an <%ae>|%s|%b", end.ref).strip() == (
            f"aidd <aidd@localhost>|aidd checkpoint {RUN} 001-end|files: 2")
        done = subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=root,
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr


def test_a_packed_ref_of_that_name_or_other_ref_storage_is_left_to_git(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = CheckpointStore(repo, RUN, os.environ)
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "update-ref", f"refs/aidd/checkpoints/{RUN}/001", head)
    git(repo, "pack-refs", "--all")
    runs = _git_runs(monkeypatch)
    point = store.record("001")
    assert [r[0] for r in runs].count("update-ref") == 1  # the packed one is git's
    assert git(repo, "rev-parse", point.ref).strip() == point.commit
    from aidd.project.gitobjects import Objects

    local = [("local", "extensions.refstorage", "reftable")]
    assert not Objects.of(repo, repo / ".git", local).write_ref(point.ref, head)
    always = [("local", "core.logAllRefUpdates", "always")]
    assert not Objects.of(repo, repo / ".git", always).write_ref(point.ref, head)


def test_an_unchanged_start_names_the_end_s_ref_file_again_unless_it_was_changed(
        repo: Path) -> None:
    """Making a file costs this file system 0.3 to 0.9 ms, a name about 10 us: the start of an
    attempt that changed nothing is a link to the last ref, when that still holds the commit
    as aidd wrote it (issue 33)."""
    refs = repo / ".git" / "refs" / "aidd" / "checkpoints" / RUN
    store = CheckpointStore(repo, RUN, os.environ)
    store.record("001")
    (repo / "app.py").write_text("v2\n")
    end = store.record("001-end")
    start = store.record("002")
    assert (refs / "002").stat().st_ino == (refs / "001-end").stat().st_ino
    assert git(repo, "rev-parse", start.ref).strip() == end.commit
    again = store.record("002-end")  # a chain of unchanged checkpoints: one file
    assert (refs / "002-end").stat().st_ino == (refs / "001-end").stat().st_ino
    (refs / "002-end").unlink()  # planted: a link to a file elsewhere, holding the commit
    outside = repo.parent / "elsewhere"
    outside.write_text(f"{again.commit}\n")
    (refs / "002-end").symlink_to(outside)
    store.record("003")
    assert not (refs / "003").is_symlink()
    assert (refs / "003").read_text() == f"{again.commit}\n"
    (refs / "003").write_text("0" * 40 + "\n")  # rewritten in place: not the commit now
    point = store.record("003-end")
    assert (refs / "003-end").stat().st_ino != (refs / "003").stat().st_ino
    assert git(repo, "rev-parse", point.ref).strip() == again.commit
    assert git(repo, "rev-parse", end.ref).strip() == end.commit


def test_packed_refs_is_read_again_only_once_it_changed(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clone's packed-refs may hold megabytes: each ref write read it all (issue 33)."""
    from aidd.project import gitobjects

    git(repo, "pack-refs", "--all")
    reads = spy_reads(monkeypatch, gitobjects)
    store = CheckpointStore(repo, RUN, os.environ)
    for label in ("001", "001-end", "002"):
        store.record(label)
    assert reads.count("packed-refs") == 1
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "update-ref", f"refs/aidd/checkpoints/{RUN}/002-end", head)
    git(repo, "pack-refs", "--all")  # packed-refs rewritten: it names the next label now
    runs = _git_runs(monkeypatch)
    point = store.record("002-end")
    assert [r[0] for r in runs] == ["add", "update-ref"]
    assert reads.count("packed-refs") == 2
    assert git(repo, "rev-parse", point.ref).strip() == point.commit


def test_a_repository_mapping_a_second_hash_gets_its_commits_from_git(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git(repo, "config", "extensions.compatObjectFormat", "sha256")  # git 2.43+ keeps a map
    runs = _git_runs(monkeypatch)
    (repo / "app.py").write_text("v2\n")
    point = CheckpointStore(repo, RUN, os.environ).record("001")
    assert [r[0] for r in runs].count("commit-tree") == 1
    assert git(repo, "log", "-1", "--format=%an|%s|%b", point.ref).strip() == (
        f"aidd|aidd checkpoint {RUN} 001|files: 1")


_KILLED_MID_RENAME = """
import os, signal, sys
from pathlib import Path
from aidd.project.checkpoints import CheckpointStore
def killing(real):
    def named(src, dst, **kw):
        where = os.readlink(f"/proc/self/fd/{kw['dst_dir_fd']}") if "dst_dir_fd" in kw else ""
        if "/refs/aidd/checkpoints/" in where:
            os.kill(os.getpid(), signal.SIGKILL)  # the ref written, not yet named
        return real(src, dst, **kw)
    return named
os.rename, os.link = killing(os.rename), killing(os.link)
if sys.argv[3] == "temp":  # no unnamed files (another file system): a temp file, renamed
    import aidd.fsio.write
    aidd.fsio.write._name_unnamed = lambda *a: None
CheckpointStore(Path(sys.argv[1]), sys.argv[2], os.environ).record("001")
"""


_KILLED_MID_OBJECT = """
import os, signal, sys
from pathlib import Path
from aidd.project.checkpoints import CheckpointStore
real = os.link
def link(src, dst, **kw):
    if "/objects/" in os.readlink(f"/proc/self/fd/{kw['dst_dir_fd']}"):
        os.kill(os.getpid(), signal.SIGKILL)  # the object written, not yet named
    return real(src, dst, **kw)
os.link = link
CheckpointStore(Path(sys.argv[1]), sys.argv[2], os.environ).record("001")
"""


def test_a_kill_9_mid_object_write_leaves_no_file_at_all(repo: Path) -> None:
    """An object is written in an unnamed file (O_TMPFILE) named only once whole: a kill
    before its name leaves nothing, not even a temp file for the next run to clean."""
    (repo / "app.py").write_text("v2\n")
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(_KILLED_MID_OBJECT),
                           str(repo), RUN], capture_output=True, text=True, check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr
    left = [p for p in (repo / ".git").rglob("*") if p.name.startswith(".aidd-tmp-")]
    assert left == []
    assert git(repo, "for-each-ref", "refs/aidd").strip() == ""
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=repo, capture_output=True,
                          text=True, check=False)
    assert fsck.returncode == 0, fsck.stderr


@pytest.mark.parametrize("how", ["unnamed", "temp"])
def test_a_kill_9_mid_ref_write_leaves_nothing_in_refs_and_the_next_run_cleans_up(
        repo: Path, how: str) -> None:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(_KILLED_MID_RENAME),
                           str(repo), RUN, how], capture_output=True, text=True, check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr
    refs = [p for p in (repo / ".git" / "refs").rglob("*") if p.is_file()]
    assert [p.name for p in refs] == ["main"]  # no temp file beside a ref
    assert git(repo, "for-each-ref", "refs/aidd").strip() == ""
    (repo / ".git" / TMP).mkdir(parents=True, exist_ok=True)
    left = list((repo / ".git" / TMP).iterdir())
    assert len(left) == (1 if how == "temp" else 0)  # a temp file where it was left, or none
    busy = repo / ".git" / TMP / f".aidd-tmp-{os.getpid()}-0"  # a live writer's, mid-write
    busy.write_text("")
    point = CheckpointStore(repo, RUN, os.environ).record("001")  # the next run
    assert list((repo / ".git" / TMP).iterdir()) == [busy]
    assert git(repo, "rev-parse", point.ref).strip() == point.commit


def _watching(root: Path) -> FileActivity:
    files = FileActivity(root, time.monotonic)
    files.start()
    wait_for(lambda: files.quiet(10) is not None, 30, "the watch of the project")
    return files


def test_the_file_watcher_proves_an_unchanged_tree_so_an_attempt_costs_one_git_run(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / ".automaker").mkdir()
    files = _watching(repo)
    try:
        store = CheckpointStore(repo, RUN, os.environ)
        store.quiet = lambda: files.quiet(10)  # watchdog may hold an event 0.5 s (a rename)
        store.record("001")
        (repo / "app.py").write_text("v2\n")
        first_end = store.record("001-end")
        runs = _git_runs(monkeypatch)
        start = store.record("002")  # nothing changed since: proved, not looked at
        (repo / ".automaker" / "status.md").write_text("aidd's own\n")  # a runtime file
        (repo / "new.py").write_text("new\n")
        end = store.record("002-end")
        assert [r[0] for r in runs] == ["add"]  # the tree written by aidd (project/gittrees)
        assert start.commit == first_end.commit
        assert store.changed_paths(start, end) == ["new.py"]
        (repo / "app.py").write_text("the user's, between attempts\n")
        later = store.record("003")  # a change seen: a snapshot, with it
        assert later.commit != end.commit
        assert files_at(repo, later.ref)["app.py"] == "the user's, between attempts\n"
        git(repo, "add", "new.py")  # the user's index (unwatched .git) changed: looked at
        assert store.record("003-end").files == 0
        assert [r[0] for r in runs].count("add") == 3
    finally:
        files.close()


def test_a_rename_out_of_the_tree_costs_the_next_checkpoint_no_git_run(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """watchdog held its events 0.5 s behind an unpaired rename: the next start's marker was
    late, and its checkpoint looked at the tree again (issue 33)."""
    (repo / ".automaker").mkdir()
    (repo / "notes.txt").write_text("the agent's\n")
    files = _watching(repo)
    try:
        store = CheckpointStore(repo, RUN, os.environ)
        store.quiet = lambda: files.quiet(0.2)  # about 1 ms; the hold was 0.5 s
        store.record("001")
        (repo / "notes.txt").rename(tmp_path / "notes.txt")  # out of the tree: never paired
        end = store.record("001-end")
        runs = _git_runs(monkeypatch)
        start = store.record("002")
        assert runs == []
        assert start.commit == end.commit
        assert "notes.txt" not in files_at(repo, end.ref)
    finally:
        files.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify: Linux")
def test_the_watcher_says_nothing_once_the_kernel_s_queue_overflowed(tmp_path: Path) -> None:
    """The watch's thread held on a change while more changes come than the kernel's queue
    holds: the IN_Q_OVERFLOW read after means changes went unseen."""
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 200_000:
        pytest.skip(f"a queue of {limit} events takes too long to fill")
    (tmp_path / ".automaker").mkdir()
    held, release = threading.Event(), threading.Event()

    def hold(path: str) -> None:
        if path.endswith("hold.txt"):
            held.set()
            release.wait(30)

    files = FileActivity(tmp_path, time.monotonic, hold)
    files.start()
    try:
        wait_for(lambda: files.quiet(10) is not None, 30, "the watch of the project")
        count = files.quiet(10)
        (tmp_path / ".automaker" / ".aidd-tmp-x").write_text("a temp file")
        assert files.quiet(10) == count
        (tmp_path / "a.txt").write_text("x")
        (tmp_path / "b.txt").write_text("x")
        assert files.quiet(10) != count
        (tmp_path / "hold.txt").write_text("x")
        assert held.wait(10)
        for n in range(limit + 100):  # alternating: the kernel merges only equal neighbours
            os.utime(tmp_path / ("a.txt" if n % 2 else "b.txt"))
        release.set()  # a marker made before the overflow is read is lost in it too
        wait_for(lambda: files.quiet(1) is None, 30, "the overflow told")
        (tmp_path / "c.txt").write_text("x")
        assert files.quiet(10) is None  # for good
    finally:
        release.set()
        files.close()
