"""Runs of the real `aidd` on the breeding agents of tests/fakes/storm.py (issue 13 item 5),
shared by the integration test and the fault suite."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from aidd.session.orphans import MARK_VAR
from tests.fakes.storm import FORK_STORM, TAG, install, kill_everything, left_running, marks
from tests.reliability.harness import Job
from tests.waiting import wait_for

# ending: (flags, aidd's exit code, the attempt's result)
ENDINGS = {
    "idle": (("--idle-timeout", "1", "--idle-nudge-timeout", "0"), 0, 71),
    "timeout": (("--timeout", "1", "--idle-timeout", "0"), 0, 124),
    "sigterm": ((), 124, 124),
}
LIMIT_S = 30  # idle/timeout 1 s + the 5 s kill grace + the kill itself, with a wide margin


class StormJob:
    """A `Job` whose `opencode` is one of the shell scripts of tests/fakes/storm.py."""

    def __init__(self, base: Path, name: str, script: str) -> None:
        self.job = Job(base, name)
        self.storm = self.job.base / "storm"
        self.storm.mkdir()
        self.job.env[TAG] = str(self.storm)
        self.bin_dir = install(self.job.base / "bin", script)

    def start(self, *flags: str) -> float:
        self.job.start(*flags, bin_dir=self.bin_dir)
        return time.monotonic()

    def left(self) -> list[int]:
        return left_running(TAG, str(self.storm))

    def marked(self) -> list[int]:
        return [pid for mark in marks(self.storm) for pid in left_running(MARK_VAR, mark)]

    def cleanup(self) -> None:
        kill_everything(TAG, str(self.storm))


def storm_ending(base: Path, ending: str, index: int = 0) -> None:
    """One run ended by `ending` while the agent forks; asserts nothing of it survives."""
    flags, code, result = ENDINGS[ending]
    run = StormJob(base, f"{ending}-{index}", FORK_STORM)
    began = run.start("--max-iterations", "1", *flags)
    try:
        wait_for(lambda: len(run.left()) >= 20, 30, "the fork storm")
        if ending == "sigterm":
            assert run.job.proc is not None
            run.job.proc.send_signal(signal.SIGTERM)
        done = run.job.wait(LIMIT_S + 30)
        took = time.monotonic() - began
        assert done.code == code, done.err
        assert len(marks(run.storm)) == 1
        assert run.marked() == [], f"{ending}: processes with the run's mark survived aidd"
        assert run.left() == [], f"{ending}: processes of the run survived aidd"
        assert took < LIMIT_S, f"{ending}: aidd took {took:.1f}s"
        ends = [e for e in run.job.events() if e["event"] == "iteration_end"]
        assert [e["result"] for e in ends] == [result]
        kill = next(e for e in run.job.events() if e["event"] == "kill")
        assert kill["escalated"] is True
        assert len(kill["pids"]) > 20
    finally:
        run.cleanup()
