"""The lock: free, a stale record, or held (a flock taken by another open of the file)."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

from aidd.doctor.findings import Status
from aidd.doctor.lock import check_lock
from aidd.project.paths import ProjectPaths


def _paths(tmp_path: Path) -> ProjectPaths:
    paths = ProjectPaths(tmp_path)
    paths.automaker.mkdir()
    return paths


def test_no_lock_file_is_free(tmp_path: Path) -> None:
    found = check_lock(_paths(tmp_path))
    assert (found.status, found.detail) == (Status.OK, "free (no lock file)")


def test_a_dead_holders_record_is_free_and_named(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    record = {"pid": 2**22 + 7, "pid_start": 1, "host": os.uname().nodename,
              "started_at": "2026-11-26T01:00:00+00:00"}
    paths.lock.write_text(json.dumps(record) + "\n")
    found = check_lock(paths)
    assert found.status is Status.OK
    assert "stale" in found.detail
    assert str(2**22 + 7) in found.detail


def test_a_held_flock_warns_naming_the_holder(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    paths.lock.write_text(json.dumps({"pid": os.getpid(), "started_at": "then"}) + "\n")
    fd = os.open(paths.lock, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        found = check_lock(paths)
    finally:
        os.close(fd)
    assert found.status is Status.WARN
    assert f"aidd pid {os.getpid()}, started then" in found.detail
    assert found.fix.endswith(f"aidd --stop --project-dir {paths.root.absolute()}")
    assert check_lock(paths).status is Status.OK  # let go: free (the doctor held nothing)
