"""REL-21 with a full disk or an unwritable `.automaker/`: one clear line on stderr, the
documented exit code (1, an internal error), the agent tree killed, nothing corrupted.

A real full disk needs a small tmpfs (root only, and not in every CI); RLIMIT_FSIZE gives the
same failure (EFBIG instead of ENOSPC) on any file aidd grows past the limit, for any user.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

import pytest

from tests.reliability.harness import Job, corrupt_files, kill_all, running, temp_files

pytestmark = pytest.mark.reliability

LIMIT = 1024 * 1024
FLOODING_TREE = [
    {"init": True},
    {"spawn": ["sleep", "1000"], "detach": True, "ignore": ["TERM"], "pid_file": "grandchild"},
    {"ignore": ["TERM"]},
    {"flood": 4 * LIMIT},
    {"sleep": 60},
]


def _file_size_limit() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("aidd: error: "), err
    return lines[0]


def test_disk_full_while_logging(tmp_path: Path) -> None:
    job = Job(tmp_path)
    job.fake.script(FLOODING_TREE)
    try:
        done = job.run("--max-iterations", "1", preexec=_file_size_limit, timeout=60)
        assert done.code == 1, done.err
        line = _one_error_line(done.err)
        assert "internal error" in line
        assert "File too large" in line  # the cause is named, not only where the traceback is
        grandchild = job.fake.pid("grandchild")
        assert grandchild is not None
        assert not running(grandchild)
        assert job.leftovers() == []
        assert corrupt_files(job.automaker) == []
        assert temp_files(job.project) == []
        assert not (job.automaker / "aidd.lock").exists()
    finally:
        kill_all(job.leftovers())


def test_iterations_not_a_directory(tmp_path: Path) -> None:
    """As root chmod cannot make `.automaker/` unwritable; a file where a directory must be is
    refused before anything is written (exit 3, naming it: issue 13)."""
    job = Job(tmp_path)
    job.automaker.mkdir()
    (job.automaker / "iterations").write_text("not a directory\n")
    done = job.run("--max-iterations", "1")
    assert done.code == 3, done.err
    line = _one_error_line(done.err)
    assert "iterations: is not a directory" in line
    assert job.fake.records() == []
    assert corrupt_files(job.automaker) == []
    assert not (job.automaker / "aidd.lock").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file modes")
def test_read_only_automaker(tmp_path: Path) -> None:
    job = Job(tmp_path)
    job.automaker.mkdir()
    job.automaker.chmod(0o555)
    try:
        done = job.run("--max-iterations", "1")
    finally:
        job.automaker.chmod(0o755)
    assert done.code in (1, 3), done.err
    line = _one_error_line(done.err)
    assert ".automaker" in line
    assert job.fake.records() == []

