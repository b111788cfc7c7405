"""The fleet tests' lab: projects, a fleet file and a local Temporal server in the test's
tmp dir, everything stopped at the end.

Without the fleet extra (the README's test command installs only `.[test]`), no module here
but test_cli_fleet.py is collected (they import temporalio through aidd.fleet), and one test
says why they did not run: one skip line, never a collection error."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fleet.lab import Lab, lab_in

HAVE_EXTRA = importlib.util.find_spec("temporalio") is not None
WITHOUT_EXTRA = "the fleet extra is not installed: pip install '.[fleet]' to run the fleet tests"
# Collected without the extra: it checks what `aidd fleet` says when the extra is missing.
_NEEDS_NO_EXTRA = {"conftest.py", "test_cli_fleet.py"}


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    if HAVE_EXTRA or collection_path.suffix != ".py":
        return None
    return collection_path.name not in _NEEDS_NO_EXTRA or None


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    with lab_in(tmp_path) as made:
        yield made
