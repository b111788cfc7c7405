"""REL-1 under repetition: idle kills, wall-clock kills and SIGTERM to aidd, each with an agent
whose setsid'd grandchild ignores SIGTERM, leave no process behind (AC-40, AC-54)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.fakes.attempt import STUBBORN_TREE
from tests.reliability.harness import Counts, Job, kill_all, run_parallel, running
from tests.waiting import wait_for

pytestmark = pytest.mark.reliability

# kill grace is 5 s inside aidd, so each run takes about 1 + 5 + start-up seconds
ENDINGS = {
    "idle": (("--idle-timeout", "1", "--idle-nudge-timeout", "0"), 71, 0),
    "timeout": (("--timeout", "1", "--idle-timeout", "0"), 124, 0),
    "sigterm": ((), 124, 124),
}


def one_run(base: Path, index: int, ending: str) -> None:
    flags, result, code = ENDINGS[ending]
    job = Job(base, f"{ending}-{index}")
    job.fake.script(STUBBORN_TREE)
    job.start("--max-iterations", "1", *flags)
    try:
        wait_for(lambda: job.fake.pid("grandchild") and job.fake.pid("child"), 30,
                 "the agent tree")
        pids = job.tree_pids()
        assert len(pids) == 3
        if ending == "sigterm":
            assert job.proc is not None
            job.proc.send_signal(signal.SIGTERM)
        done = job.wait(30)
        assert done.code == code, done.err
        left = job.leftovers()
        assert left == [], f"{ending}: left running {left}"
        assert [p for p in pids if running(p)] == []
        ends = [e for e in job.events() if e["event"] == "iteration_end"]
        assert [e["result"] for e in ends] == [result]
        assert job.events()[-1]["event"] == "run_end"
        assert not (job.automaker / "aidd.lock").exists()
    finally:
        kill_all(job.leftovers())


def test_repeated_kills_leave_no_process(tmp_path: Path, counts: Counts) -> None:
    names = list(ENDINGS)
    runs = [
        (lambda i=i: one_run(tmp_path, i, names[i % len(names)]))
        for i in range(counts.endings)
    ]
    run_parallel(runs, counts.parallel)
