"""The fleet tests' lab: projects, a fleet file and a local Temporal server in the test's
tmp dir, everything stopped at the end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fleet.lab import Lab, lab_in


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    with lab_in(tmp_path) as made:
        yield made
