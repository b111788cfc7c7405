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
from aidd.fsio import TMP_PREFIX, remove_stale_temps
from aidd.lock import ProjectLock, read_lock
from aidd.reap import (
    MARK_VAR,
    Orphan,
    find_marked,
    in_flight_attempts,
    new_mark,
    reap,
    reap_previous,
)
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
    lock = ProjectLock(path)
    lock.acquire(datetime.now(UTC), ("aidd",), {"agent_mark": "abc", "keep_children": False})
    try:
        assert read_lock(path)["agent_mark"] == "abc"
        assert read_lock(path)["pid"] == os.getpid()
        with path.open("ab") as fh:  # the tail a kill between write and truncate leaves
            fh.write(b'garbage", "x": 1}\n')
        assert read_lock(path)["agent_mark"] == "abc"
    finally:
        lock.release()
    assert not path.exists()


def test_a_dead_holders_record_is_kept_for_reaping(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    path = tmp_path / "aidd.lock"
    path.write_text(json.dumps({"pid": int(dead.stdout), "agent_mark": "m1"}) + "\n")
    lock = ProjectLock(path)
    lock.acquire(datetime.now(UTC), ("aidd",))
    try:
        assert lock.reclaimed_pid == int(dead.stdout)
        assert lock.previous["agent_mark"] == "m1"
        assert "agent_mark" not in read_lock(path)
    finally:
        lock.release()


def test_find_and_reap_only_marked_processes(marked: list[subprocess.Popen[bytes]]) -> None:
    mark, other = new_mark(), new_mark()
    mine = spawn(marked, mark)
    theirs = spawn(marked, other)
    found = find_marked(mark)
    assert [o.pid for o in found] == [mine]
    start = time.monotonic()
    assert [o.pid for o in reap(found, mark, SystemClock(), grace_s=0.2)] == [mine]
    assert time.monotonic() - start < 3
    marked[0].wait(5)
    assert marked[0].returncode == -signal.SIGKILL  # it ignored SIGTERM
    assert running(theirs)


def test_a_reused_pid_is_never_signalled(marked: list[subprocess.Popen[bytes]]) -> None:
    """Recorded start time differs (the pid now belongs to another process): left alone."""
    mark = new_mark()
    pid = spawn(marked, mark)
    (found,) = find_marked(mark)
    impostor = Orphan(found.pid, (found.ticks or 0) + 1, found.name, found.iteration)
    assert reap([impostor], mark, SystemClock(), grace_s=0.1) == []
    assert running(pid)


def test_keep_children_reaps_only_the_attempt_in_flight(
        tmp_path: Path, marked: list[subprocess.Popen[bytes]]) -> None:
    events = tmp_path / "events.jsonl"
    lines = [{"event": "iteration_start", "number": 1}, {"event": "iteration_end", "number": 1},
             {"event": "iteration_start", "number": 2}]
    events.write_text("".join(json.dumps(e) + "\n" for e in lines) + '{"torn')
    assert in_flight_attempts(events) == {"2"}
    mark = new_mark()
    kept = spawn(marked, mark, iteration="1")
    orphan = spawn(marked, mark, iteration="2")
    record = {"agent_mark": mark, "keep_children": True}
    reaped = reap_previous(record, events, SystemClock())
    assert [o.pid for o in reaped] == [orphan]
    assert running(kept)
    assert not running(orphan)


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
