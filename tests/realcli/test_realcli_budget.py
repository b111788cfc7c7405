"""Budgets and pacing with the real claude (issue 16 part 1): logged in with a subscription
(an OAuth token, not an API key), claude turns the provider's unified quota headers into a
stream-json `rate_limit_event`, and `--pace-at` pauses the run until the window resets. Its own
cost figure is checked against aidd's price table on the way."""

from __future__ import annotations

import time
from datetime import datetime

import pytest

from aidd.budget.prices import attempt_cost

from . import clis
from .aidd_run import run_aidd
from .anthropic_wire import subscription_quota_headers
from .conftest import StartMock, require_cli
from .scenario import Reply, Scenario

pytestmark = [pytest.mark.realcli, pytest.mark.timeout(240)]

# A subscription login: claude then reads the unified rate-limit headers (with an API key it
# ignores them and reports no window; docs/real-clis.md).
OAUTH = {"CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-mock", "ANTHROPIC_API_KEY": ""}
SHORT = ("--idle-nudge-timeout", "60", "--idle-timeout", "120", "--timeout", "120")


def test_pace_at_waits_for_the_window_claude_reports(start_mock: StartMock,
                                                     sandbox: clis.Sandbox) -> None:
    require_cli("claude")
    reset = int(time.time()) + 15  # the first attempt ends well before (about 3 s)
    mock = start_mock(Scenario([Reply.final("Paced.")], headers=subscription_quota_headers(
        0.91, reset, 0.42, reset + 3 * 86400)))
    run = run_aidd("claude", mock, sandbox, "--prompt", "Say hi.", "--max-iterations", "2",
                   "--pace-at", "90", "--rate-limit-buffer", "0", *SHORT, extra_env=OAUTH)
    assert run.code == 0, run.out[-3000:] + run.err
    assert "rate_limit_event" in run.log(1)
    (pace,) = run.events("pace")  # the second attempt reports the same, reset, window
    assert (pace["number"], pace["window"], pace["utilization"]) == (1, "five_hour", 91.0)
    assert datetime.fromisoformat(pace["until"]).timestamp() == reset
    second = run.events("iteration_start")[1]
    assert datetime.fromisoformat(second["ts"]).timestamp() >= reset
    assert len(mock.primary_requests()) == 2


def test_claudes_own_cost_matches_the_price_table(start_mock: StartMock,
                                                  sandbox: clis.Sandbox) -> None:
    require_cli("claude")
    mock = start_mock(Scenario([Reply.final("Priced.")]))
    run = run_aidd("claude", mock, sandbox, "--prompt", "Say hi.", "--max-iterations", "1",
                   *SHORT, extra_env=OAUTH)
    assert run.code == 0, run.out[-3000:] + run.err
    (end,) = run.events("iteration_end")
    assert end["cost_estimated"] is False
    assert end["model"].startswith("claude-")  # the subscription's default model
    estimate = attempt_cost(end["tokens"], None, end["model"])
    assert estimate.estimated, f"{end['model']} is not in aidd/budget/prices.json"
    assert estimate.usd == pytest.approx(end["cost_usd"], abs=1e-6)
