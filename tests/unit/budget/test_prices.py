"""The shipped price table and an attempt's cost: the CLI's figure, aidd's estimate, or unknown."""

from __future__ import annotations

import json
from datetime import date

import pytest

from aidd.budget.prices import Cost, attempt_cost, price_table
from aidd.numbers import shown
from aidd.resources import package_data
from tests.conftest import FAKES

FIXTURES = FAKES.parent / "fixtures" / "realcli" / "claude"


def test_the_table_is_dated_and_prices_each_kind_of_every_model() -> None:
    raw = json.loads(package_data("budget/prices.json"))
    assert date.fromisoformat(raw["date"]) == date.fromisoformat(price_table().date)
    for name, entry in raw["models"].items():
        assert {"input", "output", "cache_read", "cache_write", "source"} <= set(entry), name
    names = set(price_table().models)
    for family in ("claude-opus", "claude-sonnet", "claude-haiku", "gpt-"):
        assert any(n.startswith(family) for n in names), family


@pytest.mark.parametrize("name", [
    "claude-opus-5-5", "anthropic/claude-opus-5-5", "claude-opus-5-5[1m]", "Claude-Opus-5-5",
    "claude-opus-5-5-20260922", "openrouter/anthropic/claude-opus-5-5",
    "claude-opus-5-5@20260922"])
def test_a_model_is_found_however_the_cli_names_it(name: str) -> None:
    assert price_table().find(name) == price_table().models["claude-opus-5-5"]


@pytest.mark.parametrize("name", [None, "", "mock-model", "fake-model", "claude-opus",
                                  "gpt-6-sol-mini"])
def test_unknown_models_have_no_price(name: str | None) -> None:
    assert price_table().find(name) is None


@pytest.mark.parametrize("fixture", ["hello", "big_prompt", "shell"])
def test_the_estimate_matches_what_claude_itself_charged(fixture: str) -> None:
    """claude 2.1.330 reported its own cost for claude-opus-5-5 runs (recorded transcripts)."""
    lines = (FIXTURES / f"{fixture}.stdout").read_bytes().splitlines()
    result = next(e for e in map(json.loads, lines) if e.get("type") == "result")
    usage = result["usage"]
    tokens = {"input": usage["input_tokens"], "output": usage["output_tokens"],
              "cache_read": usage["cache_read_input_tokens"],
              "cache_write": usage["cache_creation_input_tokens"]}
    estimate = attempt_cost(tokens, None, "claude-opus-5-5")
    assert estimate.estimated
    assert estimate.usd == pytest.approx(result["total_cost_usd"], abs=1e-6)


TOKENS = {"input": 1_000_000, "output": 100_000, "reasoning": 100_000, "cache_read": 2_000_000,
          "cache_write": 400_000}


def test_every_kind_of_token_is_priced() -> None:
    # sonnet 5.5: 2 in, 10 out (reasoning too), 0.2 cache read, 2.5 cache write, per million
    assert attempt_cost(TOKENS, None, "anthropic/claude-sonnet-5-5") == Cost(
        2.0 + 1.0 + 1.0 + 0.4 + 1.0, True, "anthropic/claude-sonnet-5-5")


def test_the_clis_figure_wins() -> None:
    assert attempt_cost(TOKENS, 1.25, "claude-sonnet-5-5") == Cost(1.25, False,
                                                                   "claude-sonnet-5-5")


def test_a_zero_from_the_cli_for_a_priced_model_is_estimated() -> None:
    """opencode reports cost 0 for a provider it knows no price of."""
    assert attempt_cost(TOKENS, 0.0, "claude-sonnet-5-5").estimated
    assert attempt_cost({"input": 0}, 0.0, "claude-sonnet-5-5") == Cost(
        0.0, False, "claude-sonnet-5-5")


def test_without_a_price_or_tokens_the_cost_is_unknown() -> None:
    # opencode's 0 for a model without a price is no price, not a free night (issue 28).
    assert attempt_cost(TOKENS, 0.0, "mock/mock-model") == Cost(None, False, "mock/mock-model")
    assert attempt_cost(TOKENS, None, "fake-model") == Cost(None, False, "fake-model")
    assert attempt_cost(TOKENS, None, None) == Cost(None, False, None)
    assert attempt_cost(None, None, "claude-sonnet-5-5") == Cost(None, False,
                                                                 "claude-sonnet-5-5")


@pytest.mark.parametrize("forged", [float("nan"), float("inf"), -50.0, 1e9])
def test_an_impossible_figure_is_no_figure(forged: float) -> None:
    """It is estimated from the tokens where a price is known, else unknown; never summed
    into a budget as NaN or a negative (issue 27)."""
    tokens = {"input": 1_000_000}
    assert attempt_cost(tokens, forged, "claude-haiku-4-5") == Cost(
        1.0, True, "claude-haiku-4-5", refused=shown(forged))
    assert attempt_cost(tokens, forged, "fake-model") == Cost(
        None, False, "fake-model", refused=shown(forged))


def test_a_figure_the_parser_refused_is_carried() -> None:
    cost = attempt_cost({"input": 10}, None, "fake-model", refused="nan")
    assert (cost.usd, cost.refused) == (None, "nan")
