"""A copy of a running project (`cp -a`) carries the original's lock record and agent mark: a run
on the copy must leave the original's agent tree alone, and the original still cleans up after
itself (issue 13 item 4)."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest

from tests.fakes.attempt import STUBBORN_TREE
from tests.reliability.harness import Counts, Job, kill_all, running
from tests.waiting import wait_for

pytestmark = pytest.mark.reliability


def one_copy(base: Path, index: int) -> None:
    original = Job(base, f"original-{index}")
    original.fake.script(STUBBORN_TREE)
    original.start("--max-iterations", "1", "--idle-timeout", "0", "--timeout", "120")
    copy = Job(base, f"copy-{index}")
    try:
        wait_for(lambda: original.fake.pid("grandchild") and original.fake.pid("child"), 30,
                 "the original's agent tree")
        tree = original.tree_pids()
        shutil.rmtree(copy.project)
        shutil.copytree(original.project, copy.project, symlinks=True)
        done = copy.run("--max-iterations", "1", "--idle-timeout", "10")
        assert done.code == 0, done.err
        assert "reclaim" not in done.out.lower()
        assert [p for p in tree if not running(p)] == [], "the copy's run killed the original's"
        assert copy.leftovers() == []
        assert original.proc is not None
        original.proc.send_signal(signal.SIGTERM)
        assert original.wait(30).code == 124
        assert original.leftovers() == []
    finally:
        kill_all(original.leftovers() + copy.leftovers())


def test_a_run_on_a_copy_never_touches_the_originals_agent(tmp_path: Path,
                                                           counts: Counts) -> None:
    for index in range(max(1, counts.kills // 6)):
        one_copy(tmp_path, index)
