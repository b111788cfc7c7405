"""The pieces behind crash recovery: the lock record, the agents' mark and the reaper (REL-1),
atomic writes under SIGKILL and stale temp files (REL-3, LAY-12)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from aidd.clock import SystemClock
from aidd.errors import LockHeldError
from aidd.fsio import TMP_PREFIX, UnsafePathError, remove_stale_temps
from aidd.project.lockfile import (
    HolderState,
    ProjectLock,
    judge_holder,
    project_identity,
    read_lock,
)
from aidd.session import procfs
from aidd.session.orphans import MARK_VAR, find_marked, in_flight_attempts, kill_orphans, new_mark
from tests.planted import plant, within
from tests.reliability.harness import running

pytestmark = pytest.mark.reliability

STUBBORN = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('ready', flush=True); time.sleep(60)")


@pytest.fixture
def marked() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        proc.kill()
        proc.wait()


def spawn(procs: list[subprocess.Popen[bytes]], mark: str, iteration: str = "1") -> int:
    env = {**os.environ, MARK_VAR: mark, "AIDD_ITERATION": iteration}
    proc = subprocess.Popen([sys.executable, "-c", STUBBORN], env=env, stdout=subprocess.PIPE)
    procs.append(proc)
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"ready\n"  # SIGTERM is ignored from here on
    proc.stdout.close()
    return proc.pid


def test_lock_records_extra_fields_and_reads_only_the_first_line(tmp_path: Path) -> None:
    path = tmp_path / "aidd.lock"
    lock = ProjectLock(tmp_path, path, procfs)
    lock.acquire(datetime.now(UTC), ("aidd",), {"agent_mark": "abc", "keep_children": False})
    try:
        assert read_lock(tmp_path, path)["agent_mark"] == "abc"
        assert read_lock(tmp_path, path)["pid"] == os.getpid()
        with path.open("ab") as fh:  # the tail a kill between write and truncate leaves
            fh.write(b'garbage", "x": 1}\n')
        assert read_lock(tmp_path, path)["agent_mark"] == "abc"
    finally:
        lock.release()
    assert not path.exists()


class OneProcess:
    """A process table holding one process, `pid`, started at `ticks`."""

    def __init__(self, pid: int, ticks: int) -> None:
        self.pid, self.ticks = pid, ticks

    def start_ticks(self, pid: int) -> int | None:
        return self.ticks if pid == self.pid else None

    def same_process(self, pid: int, started: object) -> bool:
        return pid == self.pid and started == self.ticks


def test_the_record_names_its_aidd_by_pid_and_start_time(tmp_path: Path) -> None:
    table = OneProcess(os.getpid(), 4242)
    lock = ProjectLock(tmp_path, tmp_path / "aidd.lock", table)
    lock.acquire(datetime.now(UTC), ("aidd",))
    try:
        record = read_lock(tmp_path, tmp_path / "aidd.lock")
    finally:
        lock.release()
    assert (record["pid"], record["pid_start"]) == (os.getpid(), 4242)
    assert judge_holder(record, table).state is HolderState.ALIVE
    assert judge_holder({**record, "pid_start": 4241}, table).state is HolderState.GONE  # reused
    assert judge_holder({**record, "pid_start": None}, table).state is HolderState.GONE
    elsewhere = judge_holder({**record, "host": f"not-{record['host']}"}, table)
    assert (elsewhere.state, elsewhere.alive) == (HolderState.OTHER_HOST, True)


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def _take(root: Path, record: dict[str, object]) -> ProjectLock:
    path = root / "aidd.lock"
    path.write_text(json.dumps(record) + "\n")
    lock = ProjectLock(root, path, procfs)
    lock.acquire(datetime.now(UTC), ("aidd",))
    return lock


def test_a_dead_holders_record_of_this_directory_is_kept_for_reaping(tmp_path: Path) -> None:
    dead = _dead_pid()
    lock = _take(tmp_path, {"pid": dead, "agent_mark": "m1", "pid_start": 1,
                            "project": project_identity(tmp_path)})
    try:
        assert lock.previous_holder_gone() == dead
        assert lock.previous["agent_mark"] == "m1"
        assert "agent_mark" not in read_lock(tmp_path, tmp_path / "aidd.lock")
    finally:
        lock.release()


@pytest.mark.parametrize("record", [
    pytest.param({"project": {"dir": "/elsewhere", "dev": 1, "ino": 2}}, id="other-directory"),
    pytest.param({}, id="no-directory-recorded"),
    pytest.param({"pid": "live", "project": {"dir": "/elsewhere"}}, id="live-pid-elsewhere"),
    pytest.param({"pid": "live", "pid_start": None}, id="live-pid-without-start-time"),
])
def test_only_a_gone_holder_of_this_very_directory_is_reaped(
        tmp_path: Path, record: dict[str, object], sleeper: int) -> None:
    """A copied project carries another run's record (issue 13 item 4); a live pid without
    a start time is not proof of anything, and a live one is never reaped."""
    if record.get("pid") == "live":
        record = {"project": project_identity(tmp_path), "pid_start": procfs.start_ticks(sleeper),
                  **record, "pid": sleeper}
    lock = _take(tmp_path, {"pid": _dead_pid(), "agent_mark": "m1", **record})
    try:
        assert lock.previous_holder_gone() is None
    finally:
        lock.release()


@pytest.fixture
def sleeper() -> Iterator[int]:
    proc = subprocess.Popen(["sleep", "60"])
    yield proc.pid
    proc.kill()
    proc.wait()


def test_a_live_holder_of_this_directory_whose_file_was_replaced_is_refused(
        tmp_path: Path, sleeper: int) -> None:
    live = {"pid": sleeper, "pid_start": procfs.start_ticks(sleeper),
            "project": project_identity(tmp_path)}
    with pytest.raises(LockHeldError, match="lock file was replaced"):
        _take(tmp_path, live)


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "fifo"])
def test_a_planted_lock_file_is_refused_and_left_alone(tmp_path: Path, kind: str) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    root = tmp_path / "proj"
    root.mkdir()
    path = plant(root / "aidd.lock", kind, outside)
    with pytest.raises(UnsafePathError):
        ProjectLock(root, path, procfs).acquire(datetime.now(UTC), ("aidd",))
    assert outside.read_text() == "precious\n"
    assert path.exists() or path.is_symlink()


# An unmarked shell starts a marked orphan and reports how it ended: the kill reaps what it
# can, so the test process must not be the orphan's parent to learn its exit status.
WATCHED = 'env "$1=$2" "$3" -c "$4" & wait $!; echo "exit $?"'


def test_find_and_kill_only_marked_processes(
        tmp_path: Path, marked: list[subprocess.Popen[bytes]]) -> None:
    mark, other = new_mark(), new_mark()
    watcher = subprocess.Popen(["sh", "-c", WATCHED, "sh", MARK_VAR, mark, sys.executable,
                                STUBBORN], stdout=subprocess.PIPE)
    marked.append(watcher)
    assert watcher.stdout is not None
    assert watcher.stdout.readline() == b"ready\n"
    theirs = spawn(marked, other)
    (mine,) = find_marked(mark)
    assert mine.pid not in (watcher.pid, theirs)
    start = time.monotonic()
    killed = kill_orphans({"agent_mark": mark}, tmp_path / "events.jsonl", SystemClock(),
                          root=tmp_path)
    assert [info.pid for info in killed] == [mine.pid]
    assert time.monotonic() - start < 3  # a grace of 1 s, then SIGKILL
    assert watcher.stdout.readline() == b"exit %d\n" % (128 + signal.SIGKILL)  # ignored TERM
    watcher.stdout.close()
    assert running(theirs)


def test_keep_children_reaps_only_the_attempt_in_flight(
        tmp_path: Path, marked: list[subprocess.Popen[bytes]]) -> None:
    events = tmp_path / "events.jsonl"
    lines = [{"event": "iteration_start", "number": 1}, {"event": "iteration_end", "number": 1},
             {"event": "iteration_start", "number": 2}]
    events.write_text("".join(json.dumps(e) + "\n" for e in lines) + '{"torn')
    assert in_flight_attempts(events, tmp_path) == {"2"}
    mark = new_mark()
    kept = spawn(marked, mark, iteration="1")
    orphan = spawn(marked, mark, iteration="2")
    record = {"agent_mark": mark, "keep_children": True}
    killed = kill_orphans(record, events, SystemClock(), root=tmp_path)
    assert [info.pid for info in killed] == [orphan]
    assert running(kept)
    assert not running(orphan)


def test_the_attempt_in_flight_is_read_past_a_planted_line_and_never_from_a_fifo(
        tmp_path: Path) -> None:
    """events.jsonl is the project's (issue 27 items 14, 15): a line nested past the stack's
    depth is skipped, not a RecursionError; a FIFO there is not waited on."""
    events = tmp_path / "events.jsonl"
    lines = [json.dumps({"event": "iteration_start", "number": 3}), "[" * 100_000]
    events.write_text("\n".join(lines) + "\n")
    assert in_flight_attempts(events, tmp_path) == {"3"}
    fifo = plant(tmp_path / "fifo" / "events.jsonl", "fifo")
    record = {"agent_mark": new_mark(), "keep_children": True}
    assert within(5, lambda: in_flight_attempts(fifo, tmp_path), fifo) == set()
    assert within(5, lambda: kill_orphans(record, fifo, SystemClock(), root=tmp_path),
                  fifo) == []


WRITER = """
import sys
from pathlib import Path
from aidd.fsio import write_atomic
target = Path(sys.argv[1])
n = 0
print("ready", flush=True)
while True:
    n += 1
    write_atomic(target, (b"a" if n % 2 else b"b") * (1 << 20), root=target.parent)
"""


def test_write_atomic_under_sigkill(tmp_path: Path) -> None:
    """Killed at random moments, the target is always a whole old or new version (REL-3)."""
    target = tmp_path / "status.md"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    rng = random.Random()
    for _ in range(5):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target)], env=env,
                                stdout=subprocess.PIPE)
        assert proc.stdout is not None
        proc.stdout.readline()
        time.sleep(rng.uniform(0.05, 0.3))
        proc.kill()
        proc.wait()
        proc.stdout.close()
        data = target.read_bytes()
        assert len(data) == 1 << 20
        assert data in (b"a" * (1 << 20), b"b" * (1 << 20))
    removed = remove_stale_temps(tmp_path, tmp_path)
    assert all(p.name.startswith(TMP_PREFIX) for p in removed)
    assert [p.name for p in tmp_path.iterdir()] == ["status.md"]
