"""REL-1 under repetition against a fork loop that ignores SIGTERM: idle kills, wall-clock kills
and SIGTERM to aidd leave no process carrying the run's mark (issue 13 item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.harness import Counts, run_parallel
from tests.reliability.storm_runs import ENDINGS, storm_ending

pytestmark = pytest.mark.reliability


def test_repeated_fork_storms_leave_no_process(tmp_path: Path, counts: Counts) -> None:
    names = list(ENDINGS)
    runs = [
        (lambda i=i: storm_ending(tmp_path, names[i % len(names)], i))
        for i in range(counts.storms)
    ]
    run_parallel(runs, counts.parallel)
