"""The report's text, JSON and HTML agree on every figure for the same events: each figure of
the JSON, written as the report writes it, is found in the text and in the HTML's text."""

from __future__ import annotations

import json
from datetime import datetime
from html.parser import HTMLParser
from typing import Any

import pytest

from aidd.reports.morning import fmt
from aidd.reports.morning.html import render_html
from aidd.reports.morning.jsonform import SCHEMA_VERSION, report_json
from aidd.reports.morning.record import MorningReport
from aidd.reports.morning.text import WIDTH, render_text


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.skip += tag in ("style", "title")

    def handle_endtag(self, tag: str) -> None:
        self.skip -= tag in ("style", "title")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def norm(text: str) -> str:
    return " ".join(text.split())


def html_text(page: str) -> str:
    parser = _Text()
    parser.feed(page)
    return norm(" ".join(parser.parts))


def _time(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _total(cost: dict[str, Any]) -> str:
    """The total as the JSON says it: unknown, partly known, or known."""
    if cost["total"] is None:
        return "unknown"
    total = fmt.usd(cost["total"])
    return total if cost["complete"] else f"≥ {total}, some unknown"


def figures(data: dict[str, Any]) -> list[str]:
    """What both forms must show, from the JSON alone."""
    out = [f"Attempts: {fmt.count(data['attempts']['total'])}"]
    for run in data["runs"]:
        out += [run["run"], f"{fmt.duration(run['duration_s'])} {run['reason']} "
                f"{'-' if run['exit_code'] is None else run['exit_code']} {run['attempts']}"]
    out += [f"{c['result']} {c['label']} {fmt.count(c['count'])}"
            for c in data["attempts"]["by_result"]]
    out += [f"{c['label']} {fmt.count(c['count'])}" for c in data["failures"]]
    f = data["features"]
    out.append(f"{fmt.count(len(f['became_passing']))} became passing; "
               f"{fmt.count(f['passing_now'])} of {fmt.count(f['total_now'])} pass now")
    for p in f["became_passing"]:
        where = (f"{p['commit'][:12]} {p['subject']}" if p["commit"]
                 else p["checkpoint"].rpartition("/")[2])
        out += [p["feature"], f"{fmt.attempt(p['attempt'])}", where]
    out += [f"failed again: {', '.join(f['failed_again'])}"] if f["failed_again"] else []
    out += [f"{s['feature']} ({fmt.plural(s['attempts'], 'attempt')})" for s in f["struggling"]]
    d = data["diffstat"]
    out += [f"{fmt.plural(d['files'], 'file')}, +{fmt.count(d['added'])} "
            f"-{fmt.count(d['deleted'])}", d["from"], d["to"]]
    out += [f"{c['path']} {fmt.change(c['added'], c['deleted'])}" for c in d["top"]]
    u = data["usage"]
    out += [f"{fmt.TOKEN_LABELS[k]} {fmt.count(v)}" for k, v in u["tokens"].items()]
    out += [fmt.count(u["tokens_total"]),
            f"{_total(u['cost_usd'])}: {fmt.usd(u['cost_usd']['reported'])} reported, "
            f"{fmt.usd(u['cost_usd']['estimated'])} estimated; "
            f"{fmt.plural(u['attempts_without_cost'], 'attempt')} without a cost"]
    p = data["paused"]
    out.append(f"rate limits {fmt.duration(p['rate_limit_s'])} "
               f"({fmt.plural(p['rate_limit_sleeps'], 'sleep')}), pacing "
               f"{fmt.duration(p['pace_s'])} ({fmt.plural(p['paces'], 'pause')})")
    g = data["gate"]
    out.append(f"Gate: {fmt.plural(g['runs'], 'run')}, baseline: "
               f"{fmt.plural(g['baseline_failing'], 'command')} failing, {g['reverted']} "
               "passes reverted")
    for row in g["commands"]:
        out += [row["name"], f"red since attempt {fmt.attempt(row['red_since'])}",
                *row["new"]]
    c = data["checkpoints"]
    out += [f"Checkpoints: {fmt.count(c['total'])}", c["first"], c["last"]]
    health = data["health"]
    out += [health["verdict"], health["headline"],
            *(f for r in health["reasons"] for f in (r["what"], r["next"]))]
    e = data["events"]
    out.append(f"{fmt.count(e['lines'])} read, {fmt.count(e['in_window'])} in the window, "
               f"{fmt.count(e['skipped'])} skipped")
    return out


@pytest.fixture(scope="module")
def forms(report: MorningReport) -> tuple[dict[str, Any], str, str]:
    data = json.loads(json.dumps(report_json(report)))  # what a reader of --json gets
    return data, render_text(report), render_html(report)


def test_every_figure_of_the_json_is_in_the_text_and_the_html(
        forms: tuple[dict[str, Any], str, str]) -> None:
    data, text, page = forms
    shown_text, shown_html = norm(text), html_text(page)
    expected = [norm(f) for f in figures(data)]
    assert len(expected) > 45  # a sanity floor: the night fills every section
    assert [f for f in expected if f not in shown_text] == []
    assert [f for f in expected if f not in shown_html] == []


def test_times_agree(forms: tuple[dict[str, Any], str, str]) -> None:
    data, text, page = forms
    shown_html = html_text(page)
    for run in data["runs"]:
        for key in ("started_at", "ended_at"):
            moment = _time(run[key])
            assert fmt.short(moment) in text
            assert fmt.stamp(moment) in shown_html
    for p in data["features"]["became_passing"]:
        assert fmt.short(_time(p["at"])) in text
        assert fmt.stamp(_time(p["at"])) in shown_html
    start, end = _time(data["window"]["start"]), _time(data["window"]["end"])
    assert f"{fmt.stamp(start)} to {fmt.stamp(end)}" in text
    assert f"{fmt.stamp(start)} to {fmt.stamp(end)}" in shown_html


def test_the_json_is_versioned_and_the_text_fits_100_columns(
        forms: tuple[dict[str, Any], str, str]) -> None:
    data, text, _ = forms
    assert data["schema"] == SCHEMA_VERSION == 2
    assert max(len(line) for line in text.splitlines()) <= WIDTH
    assert data["attempts"]["total"] == len(data["attempts"]["list"]) == 9
