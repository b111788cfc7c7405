"""The HTML report in a real headless browser (Debian's chromium, over the DevTools protocol):
it loads without a console message, a script error or any request but its own file, and its
screenshot is kept as a test artefact (`test-artifacts/`, or $AIDD_TEST_ARTIFACTS). Without
chromium the test skips, saying so (the README's test command on a fresh machine); .ci/run
installs chromium and runs it again with AIDD_TEST_REQUIRE=chromium, where a missing chromium
fails it."""

from __future__ import annotations

import json
import os
import struct
from datetime import timedelta
from pathlib import Path

import pytest

from aidd.project.paths import ProjectPaths
from aidd.reports.morning.build import build_report
from aidd.reports.morning.html import render_html
from tests.browser import Browser, PageLoad, find_chromium
from tests.integration.runs import REPO
from tests.unit.reports.night import SINCE, START, rich_night

pytestmark = pytest.mark.xdist_group("chromium")  # one browser at a time on two cores


@pytest.fixture(scope="module")
def browser() -> Browser:
    binary = find_chromium()
    if binary is None:
        if "chromium" in os.environ.get("AIDD_TEST_REQUIRE", "").split(","):
            pytest.fail("chromium is not installed: .ci/run installs Debian's chromium")
        pytest.skip("chromium is not installed (apt-get install chromium) to render the report")
    with Browser(binary) as opened:
        yield opened  # type: ignore[misc]


def artefact(name: str, data: bytes) -> Path:
    folder = Path(os.environ.get("AIDD_TEST_ARTIFACTS") or REPO / "test-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)
    return folder / name


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def assert_clean(load: PageLoad, page: Path) -> None:
    assert load.console == []
    assert load.exceptions == []
    assert load.requests == [page.absolute().as_uri()]  # no font, script, image or beacon


def test_the_report_of_a_night_renders_cleanly_in_chromium(browser: Browser,
                                                            tmp_path: Path) -> None:
    night = rich_night(tmp_path / "night")
    report = build_report(night.paths, SINCE, night.clock.now(), os.environ)
    page = tmp_path / "report.html"
    page.write_text(render_html(report))
    load = browser.load(page)
    assert_clean(load, page)
    assert load.title == "aidd report: night"
    shot = artefact("report-night.png", load.screenshot)
    width, height = png_size(load.screenshot)
    assert width == 1100
    assert height > 1500, f"the whole page is in {shot}"


def test_thousands_of_attempts_render_as_one_mark_per_pixel_column(browser: Browser,
                                                                    tmp_path: Path) -> None:
    events = tmp_path / "p" / ".automaker" / "events.jsonl"
    events.parent.mkdir(parents=True)
    lines = [{"v": 1, "ts": "2026-11-24T22:00:00.000Z", "run": "r-1", "event": "run_start"}]
    for i in range(1, 3001):
        at = (START + timedelta(seconds=10 * i)).isoformat().replace("+00:00", ".000Z")
        lines.append({"v": 1, "ts": at, "run": "r-1", "event": "iteration_end", "number": i,
                      "result": (0, 71, 74, 0, 72)[i % 5], "outcome": "success",
                      "reason": "exit_status", "duration_s": 8, "cost_usd": 0.01,
                      "tokens": {"input": 100}})
    events.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = build_report(ProjectPaths(events.parents[1]), None,
                          START + timedelta(hours=9), os.environ)
    page = tmp_path / "many.html"
    page.write_text(render_html(report))
    assert page.stat().st_size < 1 << 20
    load = browser.load(page)
    assert_clean(load, page)
    artefact("report-3000-attempts.png", load.screenshot)
