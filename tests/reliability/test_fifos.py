"""FIFOs where aidd reads project content (issue 13 item 7), repeated: prompt overrides, audit
definitions, the completion markers, a copy-list source, feature files and todo.md, under runs
and one-shots. Each run ends on its own (a FIFO once hung aidd until SIGKILL), with at most one
line on stderr and nothing written outside the project."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.reliability.harness import Counts, Job, kill_all

pytestmark = pytest.mark.reliability

RUN = ("--max-iterations", "1", "--idle-timeout", "10")
CASES = [
    ("prompts/onboarding.md", RUN),
    ("prompts/audits/SECURITY.md", ("--audit", "SECURITY", *RUN)),
    (".project_completed", RUN),
    (".project_completion_pending", ("--status",)),
    ("features/feature-1-a/feature.json", ("--check-features",)),
    ("todo.md", ("--status", "--json")),
    ("COPY_SOURCE", RUN),
]


def _plant(job: Job, rel: str) -> None:
    if rel == "COPY_SOURCE":  # the copy list is the user's; its source may still be a FIFO
        os.mkfifo(job.outside / "pipe")
        home = job.base / "aidd-home"
        home.mkdir()
        (home / "copyfiles.txt").write_text(f"{job.outside / 'pipe'} -> copied.txt\n")
        return
    path = job.automaker / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


def test_fifos_in_project_content_never_hang_aidd(tmp_path: Path, counts: Counts) -> None:
    for round_ in range(max(1, counts.kills // 6)):
        for index, (rel, flags) in enumerate(CASES):
            job = Job(tmp_path, f"fifo-{round_}-{index}")
            job.automaker.mkdir(exist_ok=True)
            _plant(job, rel)
            try:
                done = job.run(*flags, timeout=30)  # raises TimeoutExpired on a hang
                assert done.code in (0, 3, 7), (rel, done.code, done.err)
                assert "internal error" not in done.err, (rel, done.err)
                assert done.err.count("\n") <= 1, (rel, done.err)
                assert not (job.project / "copied.txt").exists()
                assert (job.outside / "precious.txt").read_text() == "the user's own file\n"
            finally:
                kill_all(job.leftovers())
