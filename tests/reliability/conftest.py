"""Fault-injection suite (marker `reliability`): light counts by default, `--heavy` for the
overnight counts (`pytest tests/reliability --heavy`)."""

from __future__ import annotations

import pytest

from tests.reliability.harness import Counts


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--heavy", action="store_true", default=False,
                     help="run the reliability suite with its heavy counts (100/50 runs, 50 MiB)")


def _heavy(config: pytest.Config) -> bool:
    return bool(config.getoption("--heavy", default=False))


@pytest.fixture(scope="session")
def counts(request: pytest.FixtureRequest) -> Counts:
    return Counts.heavy() if _heavy(request.config) else Counts.light()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The heavy counts run for minutes: lift pytest-timeout's per-test limit for them."""
    if _heavy(config):
        for item in items:
            if item.nodeid.startswith("tests/reliability/"):
                item.add_marker(pytest.mark.timeout(1800))
