"""A stop request, `.stop` in `.automaker/`, ends the run after the attempt in flight: it is
noticed within a second, the attempt may finish, a stale one from before the run is removed,
and aidd exits 6 (SUP-52, AC-51, AC-52)."""

from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path

from tests.conftest import FakeAgent
from tests.integration.runs import LIMITS, OK, RunAidd, events, has_event, log, started
from tests.waiting import wait_for


def test_stop_is_noticed_within_a_second(env: dict[str, str], fake_agent: FakeAgent,
                                         project: Path, tmp_path: Path) -> None:
    """AC-52: a `.stop` written during an attempt is logged and emitted within 1 s."""
    fake_agent.script([{"say": "working"}, {"sleep": 4}, *OK])
    with started(env, tmp_path, "--project-dir", str(project), *LIMITS) as proc:
        wait_for((fake_agent.record_dir / "inv-000.json").exists)
        (project / ".automaker" / ".stop").write_text("now\n")
        written = time.time()
        wait_for(has_event(project, "stop_requested"), timeout=10)
        seen = time.time()
        assert "stop requested; finishing the current agent run" in log(project)
        assert proc.wait(timeout=30) == 6
    (requested,) = events(project, "stop_requested")
    assert datetime.fromisoformat(requested["ts"]).timestamp() - written < 1.5
    assert seen - written < 3  # polling slack of the test itself on a loaded machine
    (end,) = events(project, "iteration_end")
    assert end["duration_s"] >= 3.5  # the attempt was allowed to finish


def test_stale_stop_is_removed_and_stop_during_run_exits_6(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-51, AC-52: a stale .stop is deleted; one written by the agent's attempt ends the run."""
    (project / ".automaker").mkdir()
    (project / ".automaker" / ".stop").write_text("old\n")
    an_hour_ago = time.time() - 3600  # stale: older than the run (one newer is a request)
    os.utime(project / ".automaker" / ".stop", (an_hour_ago, an_hour_ago))
    fake_agent.script([{"say": "x"}, {"write_file": ".automaker/.stop", "text": "now"},
                       {"sleep": 1.5}, {"exit": 0}])
    res = run_aidd("--project-dir", str(project), *LIMITS, env=env)
    assert res.code == 6, res.err
    assert len(fake_agent.records()) == 1
    assert not (project / ".automaker" / ".stop").exists()
    names = [e["event"] for e in events(project)]
    assert "stop_requested" in names
    assert names[-2:] == ["stop", "run_end"]


def test_stop_during_a_long_failing_attempt_waits_for_it(
    env: dict[str, str], fake_agent: FakeAgent, project: Path, tmp_path: Path
) -> None:
    """AC-52: `.stop` from outside is acknowledged during the attempt, which finishes (and
    fails); then aidd exits 6 and deletes the file."""
    fake_agent.script([{"say": "working"}, {"sleep": 2.5}, {"exit": 3}])
    auto = project / ".automaker"
    record = fake_agent.record_dir / "inv-000.json"
    with started(env, tmp_path, "--project-dir", str(project), *LIMITS) as proc:
        wait_for(record.exists)
        (auto / ".stop").write_text("now\n")
        code = proc.wait(timeout=30)
    assert code == 6
    assert not (auto / ".stop").exists()
    assert len(fake_agent.records()) == 1
    names = [e["event"] for e in events(project)]
    assert names.index("stop_requested") < names.index("iteration_end")  # noticed in the attempt
    assert names[-2:] == ["stop", "run_end"]
    end = events(project, "iteration_end")[0]
    assert (end["result"], end["outcome"]) == (3, "failure")
    assert end["duration_s"] >= 2.0  # not cut short
    log = (auto / "iterations" / "001.log").read_text()
    assert log.index("stop requested; finishing the current agent run") < log.index("finished:")
    assert "stop: .automaker/.stop honoured; exiting with 6" in log
