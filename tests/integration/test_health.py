"""Issue 28 item 4: a night where 4 of 5 attempts failed exited 0 and its heartbeat's last ping
was `/0`. Through the real aidd and the fake agent, with a real HTTP server on 127.0.0.1: the
last console line says the run failed, the heartbeat ends with `/fail` (the exit code stays 0),
an ntfy topic hears the end with high priority and a failure tag, and with --strict-exit the
run exits 10 and its last ping is `/10`."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import FakeAgent
from tests.integration.runs import FAIL, LIMITS, OK, RunAidd, events
from tests.integration.test_notifications import (  # noqa: F401 (an autouse fixture: it
    _no_worker_left,  # kills the notification workers a test leaves)
    _user_config,
)
from tests.localhttp import recorder
from tests.waiting import wait_for


def _failing_night(run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent,
                   project: Path, *flags: str) -> tuple[int, str, list[str], list[str]]:
    """Five attempts, four of them failed: the code, the console's last line, the paths the
    server heard, and the ntfy end's Priority and Tags headers."""
    fake_agent.script(FAIL, OK, FAIL, FAIL, FAIL)
    with recorder() as server:
        _user_config(env, f"notify: [{{type: ntfy, url: \"{server.url}/topic\", "
                          f"events: [run_end]}}]\nheartbeat-url: {server.url}/hb\n")
        res = run_aidd("--project-dir", str(project), "--max-iterations", "5", *LIMITS,
                       *flags, env=env)
        wait_for(lambda: any(p.startswith("/hb/") and p != "/hb/start"
                             for p in server.paths()), what="the final ping")
        wait_for(lambda: bool(server.to("/topic")), what="the run's end on ntfy")
    (topic,) = server.to("/topic")
    last = res.out.rstrip("\n").splitlines()[-1]
    return res.code, last, server.paths(), [topic.headers["Priority"], topic.headers["Tags"]]


def test_a_night_where_most_attempts_failed_says_failed_and_pings_fail(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    code, last, paths, headers = _failing_night(run_aidd, env, fake_agent, project)
    assert code == 0
    assert "run ended (done): exit 0 after 5 iterations, 4 failed" in last
    assert last.endswith("— health: failed: 4 of 5 attempts failed")
    assert paths[0] == "/hb/start"
    assert paths[-1] == "/hb/fail"
    assert headers == ["high", "failed"]
    (end,) = events(project, "run_end")
    assert (end["exit_code"], end["health"]["verdict"]) == (0, "failed")
    assert [r["kind"] for r in end["health"]["reasons"]] == ["other_failures"]
    assert f"--project-dir {project}" in end["health"]["reasons"][0]["next"]


def test_with_strict_exit_a_failed_night_exits_10(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    code, last, paths, _ = _failing_night(run_aidd, env, fake_agent, project, "--strict-exit")
    assert code == 10
    assert "exit 10 after 5 iterations" in last
    assert last.endswith("— health: failed: 4 of 5 attempts failed")
    assert paths[-1] == "/hb/10"
