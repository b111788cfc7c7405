"""`--report --json` against the schema published in docs/report.md: every key documented,
none missing, every value of its documented type, for a full night and for an empty one."""

from __future__ import annotations

import json
import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

from aidd.project.paths import ProjectPaths
from aidd.reports import health
from aidd.reports.healthtally import FAILURES
from aidd.reports.morning.build import build_report
from aidd.reports.morning.jsonform import SCHEMA_VERSION, report_json
from aidd.reports.morning.record import MorningReport
from tests.integration.runs import REPO
from tests.integration.test_events_schema import check
from tests.unit.reports.night import START

DOC = REPO / "docs" / "report.md"


def schema() -> dict[str, Any]:
    blocks = re.findall(r"^```json\n(.*?)^```$", DOC.read_text(), re.S | re.M)
    assert len(blocks) == 1, "docs/report.md must hold exactly one ```json block"
    parsed: dict[str, Any] = json.loads(blocks[0])
    return parsed


def test_a_full_night_matches_the_documented_schema(report: MorningReport) -> None:
    data = json.loads(json.dumps(report_json(report)))
    assert check(data, schema(), "report") == []
    assert data["schema"] == SCHEMA_VERSION
    assert f"version {SCHEMA_VERSION}" in DOC.read_text().splitlines()[0]


def test_an_empty_report_matches_it_too(tmp_path: Path) -> None:
    report = build_report(ProjectPaths(tmp_path), None, START + timedelta(hours=1), os.environ)
    data = json.loads(json.dumps(report_json(report)))
    assert check(data, schema(), "report") == []
    assert data["diffstat"] is None


def test_every_kind_of_health_reason_is_documented() -> None:
    kinds = set(re.findall(r'Reason\(\s*"(\w+)"', Path(health.__file__).read_text()))
    kinds |= {kind for kind, _, _ in FAILURES.values()}
    kinds |= {f"ended_{reason}" for reason in health._FAILED_ENDS}
    documented = schema()["health"]["reasons"][0]["kind"].removeprefix("enum:").split("|")
    assert sorted(kinds) == sorted(documented)
