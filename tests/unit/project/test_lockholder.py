"""Whether a lock's holder lives is answered once (issue 27 item 16): every reader of the lock
(`--status`, `--doctor`, `--stop`, the morning report) gives the same answer for the same
record, a holder on another host counting as alive (docs/architecture.md "Owners")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from aidd.app import _running_pid
from aidd.doctor.findings import Status
from aidd.doctor.lock import check_lock
from aidd.project.lockfile import HolderState, judge_holder, lock_holder
from aidd.project.paths import ProjectPaths
from aidd.reports.morning.build import _running_run
from aidd.reports.running import read_run_state
from aidd.session import procfs

HERE = os.uname().nodename


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def _live() -> dict[str, Any]:
    return {"pid": os.getpid(), "pid_start": procfs.start_ticks(os.getpid()), "host": HERE}


def _record(case: str) -> dict[str, Any]:
    live = _live()
    return {
        "live": live,
        "reused pid": {**live, "pid_start": (live["pid_start"] or 0) + 1},
        "dead pid": {"pid": _dead_pid(), "pid_start": 1, "host": HERE},
        "another host": {**live, "host": f"not-{HERE}.invalid"},
        "forged pid true": {**live, "pid": True},
        "negative pid": {**live, "pid": -1},
        "no record": {},
    }[case]


ALIVE = {"live": True, "reused pid": False, "dead pid": False, "another host": True,
         "forged pid true": False, "negative pid": False, "no record": False}

# Each reader's own way of saying "an aidd holds this lock".
READERS: dict[str, Callable[[ProjectPaths], bool]] = {
    "status": lambda p: read_run_state(p, datetime.now(UTC)).pid is not None,
    "doctor": lambda p: check_lock(p).status is Status.WARN,
    "report": lambda p: _running_run(p) is not None,
    "stop": lambda p: _running_pid(p) is not None,
}


@pytest.mark.skipif(not procfs.available(), reason="start ticks need /proc")
@pytest.mark.parametrize("case", sorted(ALIVE))
def test_every_reader_gives_the_one_answer(tmp_path: Path, case: str) -> None:
    paths = ProjectPaths(tmp_path)
    paths.automaker.mkdir()
    paths.lock.write_text(json.dumps({**_record(case), "started_at": "then"}) + "\n")
    answers = {name: read(paths) for name, read in READERS.items()}
    assert answers == dict.fromkeys(READERS, ALIVE[case])
    assert lock_holder(paths.root, paths.lock, procfs).alive is ALIVE[case]


@pytest.mark.skipif(not procfs.available(), reason="start ticks need /proc")
def test_the_states_a_record_can_name() -> None:
    assert judge_holder(_record("live"), procfs).state is HolderState.ALIVE
    assert judge_holder(_record("reused pid"), procfs).state is HolderState.GONE
    assert judge_holder(_record("dead pid"), procfs).state is HolderState.GONE
    elsewhere = judge_holder(_record("another host"), procfs)
    assert (elsewhere.state, elsewhere.pid, elsewhere.host) == (
        HolderState.OTHER_HOST, os.getpid(), f"not-{HERE}.invalid")
    assert judge_holder(_record("forged pid true"), procfs).state is HolderState.NONE
    assert judge_holder({"pid": 10**30, "host": HERE}, procfs).state is HolderState.GONE
