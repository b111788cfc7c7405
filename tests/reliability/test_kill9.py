"""REL-1, REL-3, SUP-80 after `kill -9` of aidd at random points of a run: every file under
`.automaker/` still parses, the next run reclaims the lock, reaps the orphaned agent tree from
the mark it recorded, and leaves no temp file behind."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.reliability.harness import (
    Counts,
    Job,
    corrupt_files,
    kill_all,
    run_parallel,
    running,
    temp_files,
)
from tests.waiting import wait_for

pytestmark = pytest.mark.reliability

# Ignores TERM and HUP (the hang-up when aidd's end of the pty closes): only a reaper ends it.
ORPHAN_TREE = [
    {"init": True},
    {"say": "working"},
    {"ignore": ["TERM", "HUP"]},
    {"spawn": ["sleep", "1000"], "detach": True, "ignore": ["TERM", "HUP"],
     "pid_file": "grandchild"},
    {"spawn": ["sleep", "1001"], "ignore": ["TERM", "HUP"], "pid_file": "child"},
    {"sleep": 60},
]
QUICK_FAIL = [{"say": "x"}, {"exit": 3}]
RATE_LIMITED = [{"init": True}, {"error": {"name": "APIError", "message": "Too Many Requests",
                                           "status": 429, "headers": {"retry-after": "30"}}},
                {"exit": 1}]
OK = [{"init": True}, {"say": "done"}, {"finish": True}]


def _during_agent(job: Job, rng: random.Random) -> list[int]:
    """The agent's descendants: the agent itself dies with aidd (PR_SET_PDEATHSIG, checked in
    one_kill), its children and a detached grandchild outlive it until the next run."""
    job.fake.script(ORPHAN_TREE)
    job.start("--max-iterations", "1")
    wait_for(lambda: job.fake.pid("grandchild") and job.fake.pid("child"), 30, "agent tree")
    _pause(rng, 0.3)
    agents = {r["pid"] for r in job.fake.records()}
    return [p for p in job.tree_pids() if p not in agents]


def _during_metadata(job: Job, rng: random.Random) -> list[int]:
    """A fast loop of failing attempts: aidd is mostly writing prompts, status, logs, events."""
    job.fake.script(QUICK_FAIL)
    job.start("--max-iterations", "100000", "--extract-structured", "--idle-timeout", "5")
    wait_for(lambda: job.fake.records(), 30, "the first attempt")
    _pause(rng, 1.0)
    return []


def _during_rate_limit_sleep(job: Job, rng: random.Random) -> list[int]:
    job.fake.script(RATE_LIMITED)
    job.start("--max-iterations", "1", "--rate-limit-buffer", "0")
    wait_for(lambda: any(e["event"] == "rate_limit_sleep" for e in job.events()), 30,
             "rate_limit_sleep")
    _pause(rng, 0.3)
    return []


def _pause(rng: random.Random, upto_s: float) -> None:
    import time

    time.sleep(rng.uniform(0, upto_s))


POINTS = {"agent": _during_agent, "metadata": _during_metadata,
          "ratelimit": _during_rate_limit_sleep}


def one_kill(base: Path, index: int, point: str, seed: int) -> None:
    job = Job(base, f"{point}-{index}")
    try:
        orphans = POINTS[point](job, random.Random(seed))
        job.kill9()
        assert corrupt_files(job.automaker) == []
        assert (job.automaker / "aidd.lock").exists()
        agents = [r["pid"] for r in job.fake.records()]
        wait_for(lambda: not any(running(p) for p in agents), 10, "the agent's end with aidd")
        assert all(running(p) for p in orphans), "the agent's descendants should outlive aidd"
        job.fake.script(OK)
        done = job.run("--max-iterations", "1", "--idle-timeout", "10")
        assert done.code == 0, done.err
        assert "reclaimed the lock" in done.out
        if orphans:
            assert "left running by that aidd's agent" in done.out
        assert [p for p in orphans if running(p)] == []
        assert job.leftovers() == []
        assert corrupt_files(job.automaker) == []
        assert temp_files(job.project) == []
        assert job.events()[-1]["event"] == "run_end"
    finally:
        kill_all(job.leftovers())


def test_kill9_at_random_points(tmp_path: Path, counts: Counts) -> None:
    seed = random.randrange(1 << 30)
    names = list(POINTS)
    runs = [
        (lambda i=i: one_kill(tmp_path, i, names[i % len(names)], seed + i))
        for i in range(counts.kills)
    ]
    print(f"seed {seed}")
    run_parallel(runs, counts.parallel)
