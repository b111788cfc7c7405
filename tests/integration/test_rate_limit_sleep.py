"""A rate-limited attempt (74) makes aidd sleep until the limit resets, then retry the same
iteration: the wake time from each CLI's signal, the fallback, and `.stop` or a signal during
the sleep (SUP-50, SUP-60, AC-31, AC-45..47)."""

from __future__ import annotations

import math
import signal
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.conftest import FakeAgent
from tests.integration.runs import (
    LIMITS,
    NOISE,
    OK,
    READ,
    RunAidd,
    events,
    file_has,
    has_event,
    started,
)
from tests.integration.scenario import CLIS, MakeScenario
from tests.waiting import wait_for

RATE_LIMITED: list[dict[str, Any]] = [
    {"init": True}, {"error": {"name": "APIError", "message": "rate limit exceeded"}}]
CLAUDE_LIMIT_EVENT = "event"
CLAUDE_LIMIT_TEXT = "text"


@pytest.mark.parametrize("source", [CLAUDE_LIMIT_EVENT, CLAUDE_LIMIT_TEXT])
def test_claude_rate_limit_sleep_until(env: dict[str, str], fake_agent: FakeAgent,
                                       project: Path, tmp_path: Path, source: str) -> None:
    """AC-31, AC-47: `rate_limit_sleep.until` is resetsAt + buffer, or the next 02:00 in
    Berlin + 60 s for the message form; a `.stop` then ends the long sleep with 6."""
    resets_at = int(time.time()) + 120
    limit: list[dict[str, Any]] = [{"init": True}]
    if source == CLAUDE_LIMIT_EVENT:
        limit.append({"json": {"type": "rate_limit_event", "rate_limit_info": {
            "status": "rejected", "resetsAt": resets_at, "rateLimitType": "five_hour"}}})
    limit += [{"result": {"is_error": True, "api_error_status": 429,
                          "result": "You've hit your limit · resets 2am (Europe/Berlin)"}},
              {"exit": 1}]
    fake_agent.script(limit)
    # 2am Berlin may be up to a day away: past the default 6 h cap (--rate-limit-max-sleep)
    with started(env, tmp_path, "--project-dir", str(project), "--cli", "claude-code",
                 "--rate-limit-buffer", "60", "--rate-limit-max-sleep", "1d", *LIMITS) as proc:
        wait_for(has_event(project, "rate_limit_sleep"))
        asked = time.monotonic()
        (project / ".automaker" / ".stop").write_text("now\n")
        assert proc.wait(timeout=30) == 6
        assert time.monotonic() - asked < 4  # 1 s, plus slack for a loaded machine
    (sleep,) = events(project, "rate_limit_sleep")
    until = datetime.fromisoformat(sleep["until"])
    if source == CLAUDE_LIMIT_EVENT:
        assert until.timestamp() == resets_at + 60
        assert sleep["source"] == "rate_limit_event"
    else:
        reset = until - timedelta(seconds=60)
        berlin = reset.astimezone(ZoneInfo("Europe/Berlin"))
        assert (berlin.hour, berlin.minute, berlin.second) == (2, 0, 0)
        assert timedelta(0) < reset - datetime.now(berlin.tzinfo) <= timedelta(days=1)
        assert sleep["source"] == "message"
    (end,) = events(project, "iteration_end")
    assert (end["result"], end["outcome"]) == (74, "rate_limited")


def test_fallback_retry_comes_after_about_a_second(run_aidd: RunAidd, env: dict[str, str],
                                                   fake_agent: FakeAgent, project: Path) -> None:
    """AC-46: an unparsable limit message under --rate-limit-fallback 1 is retried ~1 s later."""
    fake_agent.script([{"init": True}, {"error": {"name": "APIError",
                                                  "message": "rate limit exceeded"}}], OK)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1",
                   "--rate-limit-fallback", "1", *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    (sleep,) = events(project, "rate_limit_sleep")
    assert sleep["source"] == "fallback"
    assert 0.5 <= sleep["seconds"] <= 1.0
    first, second = fake_agent.records()
    assert 0.9 <= second["started"] - first["started"] <= 4.0


@pytest.mark.parametrize("how", ["stop", "sigterm"])
def test_stop_or_signal_during_a_rate_limit_sleep(
    env: dict[str, str], fake_agent: FakeAgent, project: Path, tmp_path: Path, how: str
) -> None:
    """AC-47: a 300 s sleep ends within a second of `.stop` (6) or SIGTERM (124)."""
    fake_agent.script([{"print": NOISE}, *RATE_LIMITED])
    auto = project / ".automaker"
    with started(env, tmp_path, "--project-dir", str(project), "--rate-limit-fallback", "300",
                 *LIMITS) as proc:
        wait_for(file_has(auto / "events.jsonl", '"rate_limit_sleep"'))
        asked = time.monotonic()
        if how == "stop":
            (auto / ".stop").write_text("now\n")
        else:
            proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
        elapsed = time.monotonic() - asked
    assert code == (6 if how == "stop" else 124)
    assert elapsed < 5, elapsed  # the sleep had 300 s to go; 1 s plus start-up slack
    assert not (auto / ".stop").exists()
    assert len(fake_agent.records()) == 1
    end = events(project, "run_end")[-1]
    assert end["reason"] == ("stopped" if how == "stop" else "signal")
    assert end["rate_limit_sleeps"] == 1
    assert end["paused_s"] < 5
    log = (auto / "iterations" / "001.ratelimited.log").read_bytes()
    assert b"rate limited; sleeping until" in log
    assert b"\x1b" not in log  # LOG-20: rate-limited logs are cleaned too
    assert not (auto / "iterations" / "001.log").exists()


def test_rate_limited_attempts_do_not_count(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-45: --max-iterations 1: a 74 then a success make two attempts and exit 0."""
    fake_agent.script(RATE_LIMITED, OK)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1",
                   "--rate-limit-fallback", "1", *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == 2
    iterations = project / ".automaker" / "iterations"
    assert sorted(p.name for p in iterations.glob("*.log")) == ["001.ratelimited.log", "002.log"]
    assert "Iteration 1 of 1 (log 002)" in (iterations / "002.log").read_text()
    end = events(project, "run_end")[-1]
    assert (end["iterations"], end["attempts"], end["rate_limit_sleeps"]) == (1, 2, 1)
    assert [e["index"] for e in events(project, "iteration_start")] == [1, 1]


def _rate_limited(cli: str) -> list[dict[str, Any]]:
    if cli == "claude-code":
        return [{"init": True}, {"json": {"type": "rate_limit_event", "rate_limit_info": {
            "status": "rejected", "resetsAt": math.ceil(time.time()) + 2,
            "rateLimitType": "five_hour"}}}, {"result": {
                "is_error": True, "subtype": "error", "result": "rate limited"}}, {"exit": 1}]
    return [{"init": True}, {"error": {"name": "APIError", "message": "Too many requests",
                                       "status": 429, "headers": {"retry-after": "1"}}},
            {"exit": 1}]


@pytest.mark.parametrize("cli", list(CLIS))
def test_rate_limit_pauses_and_retries_the_same_iteration(scenario: MakeScenario,
                                                          cli: str) -> None:
    ok = [{"init": True}, READ, {"say": "done"}, {"finish": True}]
    s = scenario(cli, _rate_limited(cli), ok,
                 args=("--max-iterations", "1", "--rate-limit-buffer", "0")).start().wait()
    assert s.code == 0, s.err
    names = sorted(p.name for p in s.iterations.glob("*.log"))
    assert names == ["001.ratelimited.log", "002.log"]
    assert len(s.fake.records()) == 2  # the limited attempt did not use up --max-iterations
    (sleep,) = s.named("rate_limit_sleep")
    assert sleep["source"] == ("rate_limit_event" if cli == "claude-code" else "retry_after")
    assert 0 < sleep["seconds"] <= 2.5
    until = sleep["until"][11:19]  # HH:MM:SS of the wake time, as the console shows it
    assert f"rate limited; sleeping until {until}" in s.out
    assert "rate limited; sleeping until" in s.log("001.ratelimited.log")
    ends = s.named("iteration_end")
    assert [(e["number"], e["result"]) for e in ends] == [(1, 74), (2, 0)]
    starts = s.named("iteration_start")
    assert [e["index"] for e in starts] == [starts[0]["index"]] * 2
    assert s.events()[-1]["iterations"] == 1


def test_a_reset_in_2100_sleeps_the_cap_and_says_so(env: dict[str, str], fake_agent: FakeAgent,
                                                     project: Path, tmp_path: Path) -> None:
    """Issue 27: a forged `resetsAt` in 2100 made aidd sleep 73 years; now --rate-limit-max-sleep
    (6 h by default) cuts it, on the line and in the event."""
    fake_agent.script([{"init": True}, {"json": {"type": "rate_limit_event", "rate_limit_info": {
        "status": "rejected", "resetsAt": 4_102_444_800, "rateLimitType": "five_hour"}}},
        {"result": {"is_error": True, "api_error_status": 429, "result": "limit"}}, {"exit": 1}])
    with started(env, tmp_path, "--project-dir", str(project), "--cli", "claude-code",
                 *LIMITS) as proc:
        wait_for(has_event(project, "rate_limit_sleep"))
        (project / ".automaker" / ".stop").write_text("now\n")
        assert proc.wait(timeout=30) == 6
    (sleep,) = events(project, "rate_limit_sleep")
    assert sleep["seconds"] <= 6 * 3600
    assert sleep["capped_from"].startswith("2100-01-01T")
    assert file_has(project / ".automaker" / "iterations" / "001.ratelimited.log",
                    "cut to --rate-limit-max-sleep 6h 0m 0s")()
