"""The shipped, dated price table (`prices.json`) and what an attempt cost: the CLI's own figure
where it gives one, else an estimate from its tokens at the table's prices, else unknown."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any, NamedTuple

from aidd.numbers import money, shown
from aidd.resources import package_data

_PER = 1_000_000  # the table's prices are per million tokens
_DATE_SUFFIX = re.compile(r"-(?:[0-9]{8}|[0-9]{4}-[0-9]{2}-[0-9]{2})$")


class Price(NamedTuple):
    """USD per million tokens of each kind; reasoning is billed as output."""

    input: float
    output: float
    cache_read: float
    cache_write: float

    def of(self, tokens: Mapping[str, int]) -> float:
        rates = {"input": self.input, "output": self.output, "reasoning": self.output,
                 "cache_read": self.cache_read, "cache_write": self.cache_write}
        return sum(rates.get(kind, 0.0) * count for kind, count in tokens.items()) / _PER


class PriceTable(NamedTuple):
    date: str  # when the prices were read; shown beside every estimate
    models: Mapping[str, Price]

    def find(self, model: str | None) -> Price | None:
        """The price of `model` as a CLI names it: `anthropic/claude-sonnet-5-5`,
        `claude-opus-5-5[1m]`, `gpt-6-sol-2026-09-22` and `claude-opus-5-5` are all one."""
        if not model:
            return None
        name = re.sub(r"\[[^\]]*\]$", "", model.strip().lower().rpartition("/")[2])
        name = name.partition("@")[0]
        return self.models.get(name) or self.models.get(_DATE_SUFFIX.sub("", name))


@cache
def price_table() -> PriceTable:
    data: dict[str, Any] = json.loads(package_data("budget/prices.json"))
    models = {name: Price(float(p["input"]), float(p["output"]), float(p["cache_read"]),
                          float(p["cache_write"])) for name, p in data["models"].items()}
    return PriceTable(str(data["date"]), models)


class Cost(NamedTuple):
    """What one attempt cost, as `iteration_end` records it."""

    usd: float | None  # None: unknown (no figure from the CLI, no price for the model)
    estimated: bool  # aidd's estimate from tokens and the price table, not the CLI's figure
    model: str | None  # the model priced: the one the CLI reported, else the one aidd asked for
    refused: str | None = None  # the CLI's figure, refused by the sanitiser (NaN, < 0, huge)


def attempt_cost(tokens: Mapping[str, int] | None, reported: float | None, model: str | None,
                 table: PriceTable | None = None, refused: str | None = None) -> Cost:
    """The CLI's figure wins, but a figure of 0 for tokens is a CLI that knows no price
    (opencode with a custom provider says 0): estimated when the table prices the model, else
    unknown, never a made-up $0 (issue 16). A figure the sanitiser refuses (here, or `refused`
    by the parser) is no figure: estimated, else unknown (issue 27)."""
    figure = money(reported)
    if figure is None and reported is not None:
        refused = shown(reported)
    if not tokens or not any(tokens.values()):
        return Cost(figure, False, model, refused)
    if figure:
        return Cost(figure, False, model)
    price = (table or price_table()).find(model)
    if price is None:
        return Cost(None, False, model, refused)
    return Cost(round(price.of(tokens), 6), True, model, refused)
