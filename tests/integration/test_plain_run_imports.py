"""Issue 33: a plain run imports only what it uses. Each module named here is what a run without
the option that needs it never calls, and its import cost every start: third-party packages
(psutil reads /proc/stat when imported), the standard library's email and socket, zoneinfo
and xml, and aidd's own `--parallel`, gate, extraction and `--status --json` modules; and few
dataclasses, which cost about 1 ms each to create."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import FakeAgent
from tests.gitrepo import git
from tests.integration.runs import LIMITS, OK, events

UNUSED = (
    "psutil",  # session/proctree: only a kill needs it
    "yaml",  # config/files and audits/definitions: no config file, no audit
    "email.utils", "socket", "zoneinfo",  # agents/ratelimit: only a rate limit's reset time
    "xml.etree.ElementTree",  # gate/junit: only a gate with a JUnit report
    "aidd.run.slots", "aidd.run.mergequeue", "aidd.project.merging",
    "aidd.project.schedule", "aidd.project.boardmarks",  # --parallel N
    "aidd.gate.verdict", "aidd.gate.passes", "aidd.gate.junit",  # a configured gate
    "aidd.logs.extract",  # --extract-structured
    "aidd.run.statusline",  # --console compact
    "aidd.reports.statusjson",  # --status --json
    "aidd.project.migrate",  # --migrate-features, and --status's note on a passing feature
    "aidd.notify.courier", "aidd.notify.heartbeat",  # notifications, a heartbeat
    "aidd.logs.handoff",  # the hand-off after a context exhaustion
    "click",  # a plain command line is read without it
)


def test_a_plain_run_imports_none_of_what_it_does_not_use(
        env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path) -> None:
    """One attempt of a plain run in a git project (checkpoints on), from the command line to
    the run's end: the modules above are never imported, so a start does not pay for them."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "README.md").write_text("existing code\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    fake_agent.script(OK)
    probe = ("import sys; from aidd.__main__ import main; code = main(); "
             f"print(sorted(m for m in {UNUSED!r} if m in sys.modules)); "
             "from dataclasses import is_dataclass; "
             "print(sum(1 for m in list(sys.modules.values()) if m.__name__.startswith('aidd') "
             "for v in vars(m).values() if isinstance(v, type) and v.__module__ == m.__name__ "
             "and is_dataclass(v))); sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", probe, "--project-dir", str(root), "--cli",
                           "opencode", "--max-iterations", "1", *LIMITS],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [e["label"] for e in events(root, "checkpoint")] == ["001", "001-end"]
    *_, imported, dataclasses = done.stdout.splitlines()
    assert imported == "[]", done.stdout[-2000:]
    # Each dataclass costs 0.5-1.4 ms of every start to create (Python 3.11 compiles its
    # methods); a value record is a NamedTuple unless it needs a dataclass (a default factory,
    # a field named like a tuple method, an `__add__`, mutable state): 129 before, 27 now.
    assert int(dataclasses) <= 30, dataclasses
