"""REL-1 against agents that breed processes (issue 13 item 5), through the real `aidd`: a fork
loop that ignores SIGTERM, a daemon that forks when told to stop, and a `--version` that leaves
helpers behind. After aidd exits, nothing carrying the run's mark (or the test's tag) runs."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.storm import FORKS_ON_TERM, VERSION_LEAVES_HELPERS, marks
from tests.reliability.harness import run_parallel
from tests.reliability.storm_runs import ENDINGS, StormJob, storm_ending


def test_a_fork_storm_ignoring_sigterm_leaves_nothing(tmp_path: Path) -> None:
    """The idle kill, --timeout and SIGTERM to aidd, side by side (each waits out the grace)."""
    run_parallel([lambda e=e: storm_ending(tmp_path, e) for e in ENDINGS], len(ENDINGS))


def test_a_daemon_forking_on_sigterm_leaves_nothing_across_attempts(tmp_path: Path) -> None:
    run = StormJob(tmp_path, "daemon", FORKS_ON_TERM)
    run.start("--max-iterations", "3")
    try:
        done = run.job.wait(60)
        assert done.code == 0, done.err
        assert len(marks(run.storm)) == 3
        assert run.left() == [], "a child forked by a dying daemon survived"
        reaped = [e for e in run.job.events() if e["event"] == "children_reaped"]
        assert len(reaped) == 3
        assert all(not e["kept"] for e in reaped)
    finally:
        run.cleanup()


def test_helpers_left_by_the_version_probe_are_swept(tmp_path: Path) -> None:
    run = StormJob(tmp_path, "version", VERSION_LEAVES_HELPERS)
    run.start("--max-iterations", "1")
    try:
        done = run.job.wait(60)
        assert done.code == 0, done.err
        assert run.left() == [], "`opencode --version` left its helpers running"
    finally:
        run.cleanup()
