"""Fixtures for the real-CLI tests: a mock model server, a throwaway sandbox, CLI lookup.

Tests that launch a real CLI are marked `realcli` and skip, with the reason, when that CLI is not
installed under AIDD_REALCLI_PREFIX (default: <repo>/.realcli, see .ci/install-clis.sh).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from . import clis
from .mock_server import MockServer
from .scenario import Scenario

StartMock = Callable[[Scenario], MockServer]


def require_cli(cli: str) -> Path:
    """The installed binary, or skip the test saying how to install it."""
    found = clis.binary(cli)
    if found is None:
        pytest.skip(
            f"{cli} is not installed under {clis.prefix()} "
            f"(run .ci/install-clis.sh {clis.prefix()} or set AIDD_REALCLI_PREFIX)"
        )
    return found


@pytest.fixture
def start_mock() -> Iterator[StartMock]:
    """`mock = start_mock(Scenario([...]))`; every server started is stopped at teardown."""
    started: list[MockServer] = []

    def _start(scenario: Scenario) -> MockServer:
        started.append(MockServer(scenario).start())
        return started[-1]

    yield _start
    for mock in started:
        mock.stop()


@pytest.fixture
def sandbox() -> Iterator[clis.Sandbox]:
    """A throwaway HOME and project directory."""
    box = clis.Sandbox.create()
    yield box
    if not os.environ.get("AIDD_KEEP_SANDBOX"):
        box.remove()
