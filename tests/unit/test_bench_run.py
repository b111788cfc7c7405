"""bench/run.py: discovery, tolerance of broken modules, `--only`, and the report's content,
driven by tiny dummy modules in a tmp dir (no real benchmark runs)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench import run as bench_run
from bench.common import Result

GOOD = '''
from bench.common import Result

CALLS = []

def run(quick):
    CALLS.append(quick)
    return [
        Result("Speed", "fast case", [0.1, 0.2, 0.3], floor="nothing", floor_samples=[0.1],
               target="<= 0.5 s", met=True, note="measured " + ("quick" if quick else "full")),
        Result("Speed", "slow case", [0.9, 1.0, 1.1], target="<= 0.5 s", met=False),
        Result("Memory", "rss", [12.0], unit="MiB"),
    ]
'''
BROKEN = "def run(quick):\n    raise RuntimeError('boom')\n"
EXITS = "import sys\ndef run(quick):\n    sys.exit('bench: a child failed')\n"
NO_RUN = "VALUE = 1\n"
BAD_SYNTAX = "def run(quick:\n"


@pytest.fixture
def bench_dir(tmp_path: Path) -> Path:
    for name, text in (("good", GOOD), ("broken", BROKEN), ("exits", EXITS), ("norun", NO_RUN),
                       ("syntax", BAD_SYNTAX)):
        (tmp_path / f"{name}_bench.py").write_text(text)
    (tmp_path / "helper.py").write_text("raise SystemExit('not a benchmark')\n")
    return tmp_path


def test_discover_finds_only_bench_modules(bench_dir: Path) -> None:
    assert list(bench_run.discover(bench_dir)) == ["broken", "exits", "good", "norun", "syntax"]


def test_run_all_survives_failing_modules(bench_dir: Path) -> None:
    logged: list[str] = []
    outcomes = bench_run.run_all(bench_run.discover(bench_dir), quick=True, log=logged.append)
    by_name = {o.name: o for o in outcomes}
    assert len(by_name["good"].results) == 3
    assert "boom" in by_name["broken"].error
    assert "a child failed" in by_name["exits"].error
    assert "run(quick)" in by_name["norun"].error
    assert "SyntaxError" in by_name["syntax"].error
    assert any("FAILED" in line for line in logged)


def test_only_selects_and_names_missing_modules(bench_dir: Path) -> None:
    outcomes = bench_run.run_all(bench_run.discover(bench_dir), quick=False,
                                 only=["good", "absent"], log=lambda _: None)
    assert [o.name for o in outcomes] == ["good", "absent"]
    assert outcomes[0].results[0].note == "measured full"
    assert "no bench/absent_bench.py" in outcomes[1].error


def test_report_has_machine_groups_notes_and_targets(bench_dir: Path) -> None:
    outcomes = bench_run.run_all(bench_run.discover(bench_dir), quick=True,
                                 only=["good", "broken"], log=lambda _: None)
    text = bench_run.render(outcomes, quick=True, now=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert "Date: 2026-01-02T03:04:05+00:00" in text
    for label in ("- CPU: ", "- RAM: ", "- OS: ", "- Python: "):
        assert label in text
    assert text.index("## Speed") < text.index("## Memory") < text.index("## Targets")
    assert "| fast case | 0.2 s (0.1-0.3)" in text
    assert "- fast case: measured quick" in text
    assert "Speed / fast case: target <= 0.5 s: met, 0.2 vs 0.5 (-60 %)" in text
    assert "Speed / slow case: target <= 0.5 s: **missed**, 1 vs 0.5 (+100 %)" in text
    assert "**broken**: not measured (RuntimeError: boom)" in text


def test_margin_uses_the_ratio_for_a_times_target() -> None:
    r = Result("Output", "50 MiB", [3.0], floor_samples=[2.0], target="<= 2x", met=True)
    assert bench_run.margin(r) == "1.5 vs 2 (-25 %)"
    assert bench_run.margin(Result("g", "c", [1.0], target="linear")) == ""


def test_margin_converts_milliseconds_and_skips_formulas() -> None:
    r = Result("g", "c", [0.04], target="<= 50 ms")
    assert bench_run.margin(r) == "0.04 vs 0.05 (-20 %)"
    assert bench_run.margin(Result("g", "c", [0.2], target="<= grace + 1 s")) == ""
    assert bench_run.margin(Result("g", "c", [0.002], target="within +-0.1 s")) == (
        "0.002 vs 0.1 (-98 %)")


def test_main_writes_the_report_and_fails_on_a_broken_module(bench_dir: Path,
                                                             tmp_path: Path) -> None:
    out = tmp_path / "docs" / "benchmarks.md"
    assert bench_run.main(["--quick", "--only", "good", "--out", str(out)], bench_dir) == 0
    assert "## Speed" in out.read_text()
    assert bench_run.main(["--only", "broken", "--out", str(out)], bench_dir) == 1
    assert "not measured" in out.read_text()


OLD_REPORT = """# Benchmarks

Written by `python bench/run.py`.

Date: 2026-01-01T00:00:00+00:00

Prose a person wrote about an earlier pass.

## Machine

- CPU: old

## Speed

What a person wrote about the speed table.

| stale speed table |

## Kept

| a group not re-run |

## Targets

- Speed / fast case: target <= 0.5 s: **missed**, 0.9 vs 0.5 (+80 %)
- Kept / case: target <= 1 s: met, 0.5 vs 1 (-50 %)

Time taken: good 1 s, kept 9 s.

## Scenarios (written by hand)

The suite's prose.
"""


def test_only_keeps_the_groups_not_re_run_and_the_hand_written_sections(
        bench_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    out.write_text(OLD_REPORT)
    assert bench_run.main(["--quick", "--only", "good", "--out", str(out)], bench_dir) == 0
    text = out.read_text()
    assert "Prose a person wrote about an earlier pass." in text
    assert "Re-measured on " in text
    assert "`bench/run.py --only good`: Speed, Memory" in text
    assert "stale speed table" not in text
    assert "What a person wrote about the speed table." in text
    assert "| fast case | 0.2 s (0.1-0.3)" in text
    order = [text.index(f"## {t}") for t in ("Speed", "Kept", "Memory", "Targets", "Scenarios")]
    assert order == sorted(order)
    assert "| a group not re-run |" in text
    assert "The suite's prose." in text
    assert "- Kept / case: target <= 1 s: met" in text
    assert "Speed / fast case: target <= 0.5 s: met" in text
    assert "+80 %" not in text
    assert "Time taken: good " in text
    assert "kept 9 s" not in text


def test_a_full_run_rewrites_all_but_the_hand_written_sections(bench_dir: Path,
                                                                tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    out.write_text(OLD_REPORT)
    bench_run.main(["--quick", "--out", str(out)], bench_dir)
    text = out.read_text()
    assert "Prose a person wrote" not in text
    assert "## Kept" not in text
    assert text.index("## Targets") < text.index("## Scenarios (written by hand)")
    assert "The suite's prose." in text
