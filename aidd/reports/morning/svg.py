"""The HTML report's charts, as inline SVG (no script, no font, no network): a timeline of
attempts coloured by result, cumulative cost and tokens, and features passing over time."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import datetime, timedelta
from html import escape

from aidd.errors import RESULTS, TIMEOUTS, ExitCode, result_words
from aidd.reports.morning import fmt
from aidd.reports.morning.record import AttemptRow, Window

WIDTH, HALF, LEFT, RIGHT = 960, 470, 48, 64
MAX_MARKS = 1500  # more attempts than this: one mark per pixel column, its worst result
MAX_POINTS = 800  # a line chart's points, at most (the last point is always exact)

# (key, label, colour) by how an attempt ended; the worst first.
# A result's class and label are its name in aidd.errors (the timeouts share one class).
_TIMEOUT = RESULTS[ExitCode.TIMEOUT_OR_SIGNAL].key
_EXHAUSTED, _RATE_LIMITED, _NO_WORK, _SUCCESS = (
    RESULTS[code].key for code in (ExitCode.CONTEXT_EXHAUSTED, ExitCode.RATE_LIMITED,
                                   ExitCode.NO_WORK, ExitCode.SUCCESS))
CLASSES = (("fatal", "fatal", "#7b3fb5"), ("gate_red", "gate newly red", "#b3001b"),
           ("failure", "failure", "#d64545"),
           (_TIMEOUT, ", ".join(result_words(code) for code in TIMEOUTS), "#e8793a"),
           (_EXHAUSTED, result_words(ExitCode.CONTEXT_EXHAUSTED), "#c9a227"),
           (_RATE_LIMITED, result_words(ExitCode.RATE_LIMITED), "#e0a526"),
           (_NO_WORK, result_words(ExitCode.NO_WORK), "#9aa0a6"),
           (_SUCCESS, result_words(ExitCode.SUCCESS), "#2e9d4c"))
COLOURS = {key: colour for key, _, colour in CLASSES}
_RANK = {key: i for i, (key, _, _) in enumerate(CLASSES)}
_LABEL_PX = 7  # the width of one digit of an attempt's label, in the chart's pixels
_TICKS = (60, 300, 600, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800)


_BY_RESULT: dict[int, str] = {
    ExitCode.CONTEXT_EXHAUSTED: _EXHAUSTED,  # it worked, then ran out of room
    ExitCode.RATE_LIMITED: _RATE_LIMITED, ExitCode.NO_WORK: _NO_WORK,
    **{code: _TIMEOUT for code in TIMEOUTS}}


def result_class(attempt: AttemptRow) -> str:
    if attempt.outcome == "fatal":
        return "fatal"
    if attempt.gate_red:
        return "gate_red"
    if (key := _BY_RESULT.get(attempt.result)) is not None:
        return key
    if attempt.outcome == "rate_limited":
        return _RATE_LIMITED
    return _SUCCESS if attempt.outcome == "success" else "failure"


class _Axis:
    def __init__(self, window: Window, width: int) -> None:
        self.start = window.start
        self.span = max((window.end - window.start).total_seconds(), 1.0)
        self.width = width
        self.plot = width - LEFT - RIGHT

    def x(self, moment: datetime) -> float:
        offset = (moment - self.start).total_seconds() / self.span
        return LEFT + self.plot * min(max(offset, 0.0), 1.0)

    def ticks(self, height: float) -> list[str]:
        most = max(2, self.plot // 110)  # a label every 110 pixels at most
        step = next((t for t in _TICKS if self.span / t <= most), _TICKS[-1])
        tick = self.start.astimezone().replace(second=0, microsecond=0)
        if step >= 3600:
            tick = tick.replace(minute=0, hour=0 if step >= 86400 else tick.hour)
        out = []
        while (tick - self.start).total_seconds() <= self.span:
            if tick >= self.start:
                x = self.x(tick)
                label = fmt.clock(tick) if step < 86400 else tick.strftime("%m-%d")
                out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="10" y2="{height:.0f}" '
                           f'class="grid"/><text x="{x:.1f}" y="{height + 14:.0f}" '
                           f'class="tick" text-anchor="middle">{label}</text>')
            tick = _next_tick(tick, step)
        return out


def _next_tick(tick: datetime, step: int) -> datetime:
    moved = tick + timedelta(seconds=step)
    return moved - timedelta(seconds=(moved.hour * 3600 + moved.minute * 60) % step) \
        if step < 86400 else moved


def _svg(width: int, height: int, label: str, body: Sequence[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
            f'role="img" aria-label="{escape(label)}">' + "".join(body) + "</svg>")


def timeline(attempts: Sequence[AttemptRow], window: Window) -> str:
    if any(a.slot is not None for a in attempts):
        return _lanes(attempts, window)
    axis, top, bar = _Axis(window, WIDTH), 16, 34
    marks = _marks(attempts, axis, top, bar) if len(attempts) <= MAX_MARKS \
        else _columns(attempts, axis, top, bar)
    frame = f'<rect x="{LEFT}" y="{top}" width="{axis.plot}" height="{bar}" class="frame"/>'
    return _svg(WIDTH, top + bar + 24, "attempts over time, coloured by result",
                [frame, *axis.ticks(top + bar + 4), *marks])


def _lanes(attempts: Sequence[AttemptRow], window: Window) -> str:
    """`--parallel N`: one row per slot (at most events.MAX_SLOTS), the attempts of no slot
    (audits, the completion review: one agent) in a row of their own on top."""
    axis, top, bar, gap = _Axis(window, WIDTH), 16, 20, 4
    rows: dict[int | None, list[AttemptRow]] = {}
    for a in attempts:
        rows.setdefault(a.slot, []).append(a)
    frames, body = [], []
    for i, slot in enumerate(sorted(rows, key=lambda s: -1 if s is None else s)):
        y, group = top + i * (bar + gap), rows[slot]
        frames.append(f'<rect x="{LEFT}" y="{y}" width="{axis.plot}" height="{bar}" '
                      'class="frame"/>')
        body += [f'<text x="{LEFT - 6}" y="{y + bar / 2 + 4:.1f}" class="tick" '
                 f'text-anchor="end">{"one" if slot is None else f"slot {slot}"}</text>',
                 *(_marks(group, axis, y, bar) if len(group) <= MAX_MARKS
                   else _columns(group, axis, y, bar))]
    height = top + len(rows) * (bar + gap) - gap
    return _svg(WIDTH, height + 24, "attempts over time, one row per slot, coloured by result",
                [*frames, *axis.ticks(height + 4), *body])


def _marks(attempts: Sequence[AttemptRow], axis: _Axis, top: int, bar: int) -> list[str]:
    out = []
    for a in attempts:
        x0, x1 = axis.x(a.started_at), axis.x(a.ended_at)
        gate = ", gate newly red" if a.gate_red else ""
        tip = (f"{fmt.attempt(a.number)} {a.result} {result_words(a.result)} ({a.reason}{gate}), "
               f"{fmt.duration((a.ended_at - a.started_at).total_seconds())}")
        out.append(f'<rect x="{x0:.1f}" y="{top}" width="{max(x1 - x0, 1.5):.1f}" '
                   f'height="{bar}" fill="{COLOURS[result_class(a)]}"><title>{escape(tip)}'
                   "</title></rect>")
        label = str(a.number)
        if x1 - x0 >= _LABEL_PX * len(label) + 4:  # each attempt labelled where it fits
            out.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{top + bar / 2 + 4:.1f}" '
                       f'class="mark" text-anchor="middle">{label}</text>')
    return out


def _columns(attempts: Sequence[AttemptRow], axis: _Axis, top: int, bar: int) -> list[str]:
    """One mark per pixel column for thousands of attempts: the worst result in it."""
    worst: dict[int, str] = {}
    for a in attempts:
        for column in range(int(axis.x(a.started_at)), int(axis.x(a.ended_at)) + 1):
            key = result_class(a)
            if column not in worst or _RANK[key] < _RANK[worst[column]]:
                worst[column] = key
    return [f'<rect x="{column}" y="{top}" width="1" height="{bar}" fill="{COLOURS[key]}"/>'
            for column, key in sorted(worst.items())]


def legend(counts: dict[str, int]) -> str:
    items = [f'<span class="key"><i style="background:{colour}"></i>{escape(label)} '
             f"{fmt.count(counts.get(key, 0))}</span>"
             for key, label, colour in CLASSES if counts.get(key)]
    return '<p class="legend">' + "".join(items) + "</p>"


def line_chart(series: Sequence[tuple[datetime, float]], window: Window, *, label: str,
               value: str, colour: str, base: float = 0.0, width: int = WIDTH) -> str:
    """A step line over the window from `base`, its last value labelled with `value`."""
    axis, top, height = _Axis(window, width), 14, 120
    points = [(window.start, base), *series]
    if len(points) > MAX_POINTS:
        stride = len(points) / MAX_POINTS
        points = [points[int(i * stride)] for i in range(MAX_POINTS)] + [points[-1]]
    peak = max((v for _, v in points), default=0.0) or 1.0

    def y(v: float) -> float:
        return top + height - height * v / peak

    path = [f"M{axis.x(points[0][0]):.1f},{y(points[0][1]):.1f}"]
    for (_, before), (at, v) in itertools.pairwise(points):
        path.append(f"H{axis.x(at):.1f}V{y(v):.1f}" if v != before else f"H{axis.x(at):.1f}")
    path.append(f"H{axis.x(window.end):.1f}")
    last = points[-1][1]
    right = LEFT + axis.plot
    body = [f'<line x1="{LEFT}" x2="{right}" y1="{top + height}" y2="{top + height}" '
            'class="grid"/>', *axis.ticks(top + height + 4),
            f'<path d="{"".join(path)}" fill="none" stroke="{colour}" stroke-width="2"/>',
            f'<text x="{right + 4}" y="{y(last) + 4:.1f}" class="value">'
            f"{escape(value)}</text>",
            f'<text x="{LEFT - 6}" y="{top + 4}" class="tick" text-anchor="end">'
            f"{escape(_short_number(peak))}</text>",
            f'<text x="{LEFT - 6}" y="{top + height + 4}" class="tick" text-anchor="end">0</text>']
    return _svg(width, top + height + 24, label, body)


def _short_number(value: float) -> str:
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.3g}"
