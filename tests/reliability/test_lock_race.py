"""The project lock under racing starts and ends (issue 13 item 11): it is never held twice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.reliability

REPO = Path(__file__).resolve().parents[2]

# Each worker takes the lock, then claims a token file with O_EXCL: a second holder at the same
# moment would find the token there. Then it gives the lock back (unlinking the lock file) and
# starts over, so takers constantly race releasers.
WORKER = """
import errno, os, sys, time
from datetime import UTC, datetime
from pathlib import Path
from aidd.errors import LockHeldError
from aidd.project.lockfile import ProjectLock
from aidd.session import procfs
root = Path(sys.argv[1])
token = root / "held"
deadline = time.monotonic() + float(sys.argv[2])
held = 0
while time.monotonic() < deadline:
    lock = ProjectLock(root, root / "aidd.lock", procfs)
    try:
        lock.acquire(datetime.now(UTC), ("worker",))
    except LockHeldError:
        continue
    try:
        fd = os.open(token, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        print("DOUBLE", flush=True)
        lock.release()
        continue
    os.close(fd)
    held += 1
    token.unlink()
    lock.release()
print("held", held, flush=True)
"""


def test_the_lock_is_never_held_twice_under_racing_starts(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path), "3"], env=env,
                                stdout=subprocess.PIPE, text=True) for _ in range(6)]
    outputs = [w.communicate(timeout=60)[0] for w in workers]
    assert all(w.returncode == 0 for w in workers), outputs
    assert not any("DOUBLE" in out for out in outputs), outputs
    assert sum(int(out.split()[-1]) for out in outputs) > 50  # the race really ran
