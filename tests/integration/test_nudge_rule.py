"""One rule decides whether a nudge is on (issue 13 item 17): the header, `run_start` and the
attempt agree, and the user is told when a nudge value has no effect."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import FakeAgent
from tests.integration.runs import RunAidd, events


def test_no_idle_supervision_means_no_nudge_everywhere(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    fake_agent.script([{"init": True}, {"sleep": 2.5}, {"say": "done"}, {"finish": True}])
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", "--idle-timeout", "0",
                   "--idle-nudge-timeout", "1", "--timeout", "30", env=env)
    assert res.code == 0, res.err
    assert "--idle-timeout 0 turns idle supervision off: nudge disabled" in res.out
    assert "nudge 0s" in res.out
    assert "nudge 1s" not in res.out
    assert events(project, "run_start")[0]["limits"]["nudge_timeout"] == 0
    assert events(project, "nudge") == []
