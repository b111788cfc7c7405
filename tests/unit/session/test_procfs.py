"""Process facts read from /proc: start times for the lock, environments for the mark."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest

from aidd.session import procfs
from tests.waiting import wait_for

pytestmark = pytest.mark.skipif(not procfs.available(), reason="needs /proc")
# Unique to this test process: parallel workers (and other users) run sleepers too.
FACT = f"sleeper-{uuid.uuid4().hex}"


@pytest.fixture
def sleeper() -> Iterator[int]:
    proc = subprocess.Popen(["sleep", "1017"], env={**os.environ, "TEST_FACT": FACT})
    # Popen returns once exec has begun; /proc/PID/environ reads empty until it is done.
    wait_for(lambda: procfs.find_carrying("TEST_FACT", FACT), timeout=5)
    yield proc.pid
    proc.kill()
    proc.wait()


def dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_a_pid_and_its_start_time_name_one_process(sleeper: int) -> None:
    ticks = procfs.start_ticks(sleeper)
    assert isinstance(ticks, int)
    assert procfs.same_process(sleeper, ticks)
    assert not procfs.same_process(sleeper, ticks + 1)  # the pid reused by another process
    assert not procfs.same_process(sleeper, None)  # a record without a start time
    assert procfs.start_ticks(dead_pid()) is None
    assert not procfs.same_process(dead_pid(), ticks)


def test_the_table_knows_each_process_parent_and_group(sleeper: int) -> None:
    row = procfs.table()[sleeper]
    assert (row.ppid, row.group, row.session) == (os.getpid(), os.getpgid(0), os.getsid(0))
    assert not row.zombie
    assert row.start == procfs.start_ticks(sleeper)


def test_carriers_of_an_environment_entry_are_found_by_it(sleeper: int) -> None:
    (carrier,) = procfs.find_carrying("TEST_FACT", FACT)
    assert carrier.pid == sleeper
    assert carrier.environ["TEST_FACT"] == FACT
    assert procfs.find_carrying("TEST_FACT", FACT[:-1]) == []  # a whole value, not a prefix
    assert procfs.find_carrying("TEST_FACT", "") == []
