"""The HTML report's timeline (issue 28): each attempt labelled with its number where its mark
is wide enough, and an attempt after which the gate turned red drawn as gate-red."""

from __future__ import annotations

import re

from aidd.reports.morning.record import MorningReport
from aidd.reports.morning.svg import COLOURS, timeline


def test_the_attempt_the_gate_found_red_is_drawn_red(report: MorningReport) -> None:
    red = [(a.run, a.number) for a in report.attempts if a.gate_red]
    assert len(red) == 1
    assert red[0][1] == 5  # the rich night's gate went red after attempt 5 (2 new failures)
    drawn = timeline(report.attempts, report.window)
    fills = re.findall(r'fill="(#[0-9a-f]+)"><title>#?0*5 ', drawn)
    assert fills == [COLOURS["gate_red"]], drawn[:2000]
    assert "gate newly red" in drawn


def test_wide_marks_carry_their_attempt_number(report: MorningReport) -> None:
    drawn = timeline(report.attempts, report.window)
    labels = re.findall(r'<text[^>]*class="mark"[^>]*>(\d+)</text>', drawn)
    assert labels, "no attempt was labelled"
    assert set(labels) <= {str(a.number) for a in report.attempts}
