"""A whole night, built once per module that asks for it (its git runs take about a second)."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest

from aidd.reports.morning.build import build_report
from aidd.reports.morning.record import MorningReport
from tests.unit.reports.night import SINCE, Night, rich_night


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Night:
    return rich_night(tmp_path_factory.mktemp("night"))


@pytest.fixture(scope="module")
def report(night: Night) -> MorningReport:
    return build_report(night.paths, SINCE, night.clock.now() + timedelta(hours=1), os.environ)
