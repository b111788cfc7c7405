"""Hostile project content under repetition (issue 13): planted links and FIFOs in many places,
and a terminal that stops reading. Nothing is written outside the project (each Job's
`outside` folder is the target of every planted link; the tally checks it), aidd never hangs,
and the iteration log stays complete."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.planted import plant
from tests.reliability.harness import Counts, Job, kill_all
from tests.waiting import wait_for

pytestmark = pytest.mark.reliability

LINKS = ["events.jsonl", "iterations", "audits", "aidd.lock", "status.md", "aidd-state.json",
         "iterations/002.log"]
FIFOS = ["todo.md", "aidd-state.json", "events.jsonl", "aidd.lock", "aidd.yaml", "roadmap.json",
         ".project_completion_pending", "features/feature-1-a/feature.json"]


def _plant(job: Job, rel: str, fifo: bool) -> None:
    target = job.outside if "." not in rel.split("/")[-1] else job.outside / "precious.txt"
    plant(job.automaker / rel, "fifo" if fifo else "symlink", target)


@pytest.mark.parametrize("fifo", [False, True], ids=["symlinks", "fifos"])
def test_planted_links_and_fifos_never_escape_or_hang(tmp_path: Path, counts: Counts,
                                                      fifo: bool) -> None:
    names = FIFOS if fifo else LINKS
    for round_ in range(max(1, counts.kills // 6)):
        for index, rel in enumerate(names):
            job = Job(tmp_path, f"{'fifo' if fifo else 'link'}-{round_}-{index}")
            job.fake.script([{"say": "ok"}, {"finish": True}])
            _plant(job, rel, fifo)
            try:
                done = job.run("--max-iterations", "2", "--idle-timeout", "10", timeout=30)
                assert done.code in (0, 2, 3), (rel, done.code, done.err)  # 2: aidd.yaml
                assert "internal error" not in done.err, (rel, done.err)
                assert done.err.count("\n") <= 1, (rel, done.err)
                assert (job.outside / "precious.txt").read_text() == "the user's own file\n"
                assert sorted(p.name for p in job.outside.iterdir()) == ["precious.txt"]
            finally:
                kill_all(job.leftovers())


def test_a_stalled_terminal_never_stalls_supervision(tmp_path: Path, counts: Counts) -> None:
    flood = counts.flood_mib << 20
    for index in range(max(1, counts.kills // 6)):
        job = Job(tmp_path, f"stalled-{index}")
        job.fake.script([{"init": True}, {"flood": flood}, {"sleep": 60}])
        ending = ("timeout", "sigterm")[index % 2]
        flags = ("--timeout", "3") if ending == "timeout" else ("--timeout", "120")
        started = time.monotonic()
        proc = job.start("--max-iterations", "1", "--idle-timeout", "0", *flags, stalled=True)
        try:
            log = job.automaker / "iterations" / "001.log"
            if ending == "sigterm":
                wait_for(lambda log=log: log.exists() and log.stat().st_size >= flood, 60,
                         "the flood in the log")
                proc.send_signal(signal.SIGTERM)
            done = job.wait(60)
            assert done.code == (0 if ending == "timeout" else 124), done.err
            assert time.monotonic() - started < 45
            assert log.stat().st_size > flood
            assert job.leftovers() == []
        finally:
            kill_all(job.leftovers())
