"""`--console compact` in a real run whose console is no terminal: plain lines (no status line,
no escape), the banner once, one header line per later attempt; the logs keep whole headers."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.integration.runs import LIMITS, OK, RunAidd


def test_compact_on_a_pipe_is_plain_lines_with_the_banner_once(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    feature(project, description="d")
    fake_agent.script(OK)
    done = run_aidd("--project-dir", str(project), "--max-iterations", "3", "--console",
                    "compact", *LIMITS, env=env)
    assert done.code == 0, done.err
    assert done.out.count("[aidd] Project: ") == 1  # the banner, once
    assert "[aidd] --- iteration 2 of 3 (log 002)" in done.out
    assert "[aidd] --- iteration 3 of 3 (log 003)" in done.out
    assert "\x1b" not in done.out
    for number in ("001", "002", "003"):
        log = (project / ".automaker" / "iterations" / f"{number}.log").read_text()
        assert "[aidd] Project: " in log
