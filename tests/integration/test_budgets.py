"""Budgets and pacing through the real aidd with the fake CLIs (issue 16 part 1): each budget
ends the run with 9 at the right attempt, from the CLI's tokens and cost or from an estimate;
the daily budgets span runs; --max-wall-time stops the attempt in flight; pacing sleeps until
the reported reset and a `.stop` or a signal ends the pause."""

from __future__ import annotations

import json
import signal
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeAgent
from tests.integration.runs import LIMITS, OK, RunAidd, events, has_event, log, started
from tests.waiting import wait_for

CLAUDE = ("--cli", "claude-code")


def claude_attempt(cost: float | None = 0.2, model: str = "fake-model",
                   usage: dict[str, int] | None = None,
                   before: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """A claude attempt reporting `usage` (default: 160 tokens) and `cost` (None: none)."""
    result: dict[str, Any] = {"total_cost_usd": cost}
    if usage is not None:
        result["usage"] = usage
    return [{"init": True, "model": model}, *(before or []), {"say": "done"},
            {"result": result}]


def test_max_tokens_ends_the_run_at_the_right_attempt(run_aidd: RunAidd, env: dict[str, str],
                                                      fake_agent: FakeAgent,
                                                      project: Path) -> None:
    fake_agent.script(OK)  # opencode: 125 tokens an attempt
    res = run_aidd("--project-dir", str(project), "--max-tokens", "300", "--max-iterations",
                   "10", *LIMITS, env=env)
    assert res.code == 9, res.out + res.err
    assert len(fake_agent.records()) == 3  # 125, 250, then 375 of 300
    (spent,) = events(project, "budget_exhausted")
    assert (spent["budget"], spent["limit"], spent["used"]) == ("tokens", 300, 375)
    end = events(project, "run_end")[-1]
    assert (end["exit_code"], end["reason"]) == (9, "budget")
    assert "budget exhausted: --max-tokens 300 reached (375 tokens used); exiting with 9" in (
        res.out)


def test_max_cost_reads_the_clis_figure(run_aidd: RunAidd, env: dict[str, str],
                                        fake_agent: FakeAgent, project: Path) -> None:
    fake_agent.script(claude_attempt(cost=0.2))
    res = run_aidd("--project-dir", str(project), *CLAUDE, "--max-cost-usd", "0.50",
                   "--max-iterations", "10", *LIMITS, env=env)
    assert res.code == 9, res.out + res.err
    assert len(fake_agent.records()) == 3
    (spent,) = events(project, "budget_exhausted")
    assert (spent["budget"], spent["limit"]) == ("cost_usd", 0.5)
    assert spent["used"] == pytest.approx(0.6)
    assert {e["cost_estimated"] for e in events(project, "iteration_end")} == {False}
    assert "estimated" not in res.out


@pytest.mark.parametrize("cli", ["claude-code", "opencode"])
def test_without_a_figure_the_cost_is_estimated_from_the_tokens(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
        cli: str) -> None:
    """claude names its model and gives no cost; opencode says 0 for the model aidd named.
    100,000 input and 10,000 output tokens of claude-sonnet-5-5: $0.20 + $0.10."""
    if cli == "claude-code":
        fake_agent.script(claude_attempt(cost=None, model="claude-sonnet-5-5", usage={
            "input_tokens": 100_000, "output_tokens": 10_000}))
        model: tuple[str, ...] = ()
    else:
        fake_agent.script([{"say": "done"}, {"finish": {"cost": 0, "tokens": {
            "input": 100_000, "output": 10_000, "reasoning": 0,
            "cache": {"read": 0, "write": 0}}}}])
        model = ("--model", "anthropic/claude-sonnet-5-5")
    res = run_aidd("--project-dir", str(project), "--cli", cli, *model, "--max-cost-usd", "0.5",
                   "--max-iterations", "10", *LIMITS, env=env)
    assert res.code == 9, res.out + res.err
    assert len(fake_agent.records()) == 2  # $0.30, then $0.60 of $0.50
    first = events(project, "iteration_end")[0]
    assert (first["cost_usd"], first["cost_estimated"]) == (0.3, True)
    assert first["model"].endswith("claude-sonnet-5-5")
    assert events(project, "run_end")[-1]["cost_estimated"] is True
    assert "cost ~$0.3000 (estimated) at" in log(project, 1)
    assert "(~$0.6000 (estimated) used); exiting with 9" in res.out
    assert "cost ~$0.6000 (estimated)" in res.out  # the run's last line


def test_an_unknown_model_leaves_tokens_only_budgets_working(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    fake_agent.script(claude_attempt(cost=None, model="fake-model"))
    res = run_aidd("--project-dir", str(project), *CLAUDE, "--max-cost-usd", "0.01",
                   "--max-tokens", "300", "--max-iterations", "10", *LIMITS, env=env)
    assert res.code == 9, res.out + res.err
    assert len(fake_agent.records()) == 2  # 160, 320 tokens
    assert events(project, "budget_exhausted")[0]["budget"] == "tokens"
    first = events(project, "iteration_end")[0]
    assert (first["cost_usd"], first["cost_estimated"], first["model"]) == (
        None, False, "fake-model")
    assert "cost unknown (no price for fake-model)" in log(project, 1)


@pytest.mark.parametrize(("flag", "limit", "budget", "used"), [
    ("--daily-max-tokens", "400", "daily_tokens", 480),
    ("--daily-max-cost-usd", "0.5", "daily_cost_usd", 0.6)])
def test_daily_budgets_span_two_runs(run_aidd: RunAidd, env: dict[str, str],
                                     fake_agent: FakeAgent, project: Path, flag: str,
                                     limit: str, budget: str, used: float) -> None:
    fake_agent.script(claude_attempt(cost=0.2))  # 160 tokens, $0.20 an attempt
    first = run_aidd("--project-dir", str(project), *CLAUDE, flag, limit, "--max-iterations",
                     "2", *LIMITS, env=env)
    assert first.code == 0, first.out + first.err  # 320 tokens, $0.40: within the day's budget
    second = run_aidd("--project-dir", str(project), *CLAUDE, flag, limit, "--max-iterations",
                      "5", *LIMITS, env=env)
    assert second.code == 9, second.out + second.err
    assert len(fake_agent.records()) == 3  # the second run had room for one attempt
    (spent,) = events(project, "budget_exhausted")
    assert spent["budget"] == budget
    assert spent["used"] == pytest.approx(used)
    assert [e["reason"] for e in events(project, "run_end")] == ["done", "budget"]


def test_max_wall_time_stops_the_attempt_in_flight(env: dict[str, str], fake_agent: FakeAgent,
                                                   project: Path, tmp_path: Path) -> None:
    """Graceful first (SIGTERM), the tree killed after the grace: an agent that ignores
    SIGTERM goes at the SIGKILL 5 s later."""
    fake_agent.script([{"init": True}, {"say": "working"}, {"ignore": ["TERM"]},
                       {"sleep": 60}])
    with started(env, tmp_path, "--project-dir", str(project), "--max-wall-time", "2",
                 *LIMITS) as proc:
        begun = time.monotonic()
        assert proc.wait(timeout=30) == 9
        elapsed = time.monotonic() - begun
    assert 2 <= elapsed < 2 + 5 + 5, elapsed
    (kill,) = events(project, "kill")
    assert (kill["reason"], kill["escalated"]) == ("budget", True)
    (end,) = events(project, "iteration_end")
    assert (end["result"], end["outcome"], end["reason"]) == (9, "failure", "budget")
    (spent,) = events(project, "budget_exhausted")
    assert (spent["budget"], spent["limit"]) == ("wall_time", 2)
    run_end = events(project, "run_end")[-1]
    assert (run_end["reason"], run_end["failures"]) == ("budget", 0)
    assert "--max-wall-time reached; stopping the agent" in log(project, 1)


def _limit_event(resets_at: int, utilization: float) -> dict[str, Any]:
    return {"json": {"type": "rate_limit_event", "rate_limit_info": {
        "status": "allowed_warning", "resetsAt": resets_at, "rateLimitType": "five_hour",
        "utilization": utilization}, "uuid": "u", "session_id": "s"}}


def test_pacing_sleeps_until_the_reported_reset(run_aidd: RunAidd, env: dict[str, str],
                                                fake_agent: FakeAgent, project: Path) -> None:
    resets_at = int(time.time()) + 5
    fake_agent.script(claude_attempt(before=[_limit_event(resets_at, 0.9)]),
                      claude_attempt(before=[{"mark": "second"}]))
    res = run_aidd("--project-dir", str(project), *CLAUDE, "--pace-at", "80",
                   "--rate-limit-buffer", "0", "--max-iterations", "2", *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    (pace,) = events(project, "pace")
    assert (pace["number"], pace["window"], pace["utilization"]) == (1, "five_hour", 90.0)
    assert datetime.fromisoformat(pace["until"]).timestamp() == resets_at
    second = json.loads((fake_agent.record_dir / "second").read_text())
    assert second["time"] >= resets_at
    assert "pacing: the five_hour quota window is 90% used (--pace-at 80)" in res.out


@pytest.mark.parametrize("how", ["stop", "sigterm"])
def test_stop_or_a_signal_ends_a_pause(env: dict[str, str], fake_agent: FakeAgent,
                                       project: Path, tmp_path: Path, how: str) -> None:
    fake_agent.script(claude_attempt(before=[_limit_event(int(time.time()) + 600, 0.95)]))
    with started(env, tmp_path, "--project-dir", str(project), *CLAUDE, "--pace-at", "90",
                 "--max-iterations", "3", *LIMITS) as proc:
        wait_for(has_event(project, "pace"))
        asked = time.monotonic()
        if how == "stop":
            (project / ".automaker" / ".stop").write_text("now\n")
        else:
            proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == (6 if how == "stop" else 124)
        assert time.monotonic() - asked < 4  # a quarter second, plus a loaded machine
    assert len(fake_agent.records()) == 1
    assert events(project, "run_end")[-1]["paused_s"] < 4
