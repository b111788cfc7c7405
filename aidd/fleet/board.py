"""`aidd fleet watch`'s screen: the fleet's rows as lines, pure. Everything in a row came from
the server (names, hosts, directories, results, messages): untrusted, each string through the
console's filter (console.shown), each number through aidd.numbers, each line cut to the width."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from aidd import numbers
from aidd.console import shown
from aidd.errors import result_words
from aidd.fleet.control import Row
from aidd.watch.screen import columns, cut, paint

NAME_MAX = 24  # the project column's widest (a longer name is cut; the details say it whole)
HOST_MAX = 12
KEYS = "↑/↓ j/k select · Enter watch the project · q quit"
SELECTED = "\x1b[7m"  # reverse video, when colour is wanted (the `>` marks it without)
_HEAD = ("STATE", "HOST", "TRY", "ITER", "FEATURES", "COST", "LAST RESULT")
_DETAIL_LINES = 4  # the rule and three lines on the selected project


@dataclass(frozen=True)
class Board:
    """One frame's values."""

    rows: tuple[Row, ...]
    selected: int  # an index into rows (any value when there are none)
    title: str  # where the rows came from: the server, and when
    here: bool  # the selected project's directory is on this machine
    message: str = ""  # a key's answer, or why the server could not be asked


def lines(board: Board, width: int, height: int) -> list[str]:
    """The screen, `height` lines at most, each at most `width` columns (no styling)."""
    board = replace(board, selected=max(0, min(board.selected, len(board.rows) - 1)))
    title = _one(f"aidd fleet watch · {board.title}")
    footer = _one(board.message) or KEYS
    if not board.rows:
        body = [title, "no fleet project on this server yet (aidd fleet up FLEET.yaml)"]
        return [cut(line, width) for line in [*body[:max(0, height - 1)], footer]][:height]
    names = _names(board.rows)
    name_w = min(NAME_MAX, max(len("PROJECT"), *(columns(n) for n in names)))
    host_w = min(HOST_MAX, max(len("HOST"), *(columns(_one(r.progress.host)) for r in board.rows)))
    table = [_columns("PROJECT", _HEAD, name_w, host_w, "  ")]
    table += [_columns(names[i], _cells(board.rows[i]), name_w, host_w,
                       "> " if i == board.selected else "  ") for i in _window(board, height)]
    body = [title, *table, *_details(board, names, width)]
    return [cut(line, width) for line in [*body[:max(0, height - 1)], footer]][:height]


def frame(board: Board, width: int, height: int, color: bool) -> str:
    """The screen as the terminal takes it (watch.screen.paint), the selected row reversed."""
    window = _window(board, height)
    styles = {2 + board.selected - window.start: SELECTED} if board.selected in window else {}
    return paint(lines(board, width, height), color, styles)


def _window(board: Board, height: int) -> range:
    """The rows that fit (the title, the heading, the details, the footer take the rest), the
    selected one among them."""
    room = max(1, height - 3 - _DETAIL_LINES)
    first = min(max(0, board.selected - room + 1), max(0, len(board.rows) - room))
    return range(first, min(len(board.rows), first + room))


def _names(rows: Sequence[Row]) -> list[str]:
    several = len({row.fleet for row in rows}) > 1
    return [_one(f"{r.fleet}/{r.project}" if several else r.project) for r in rows]


def _cells(row: Row) -> tuple[str, ...]:
    p = row.progress
    iteration = numbers.count(p.iteration)
    attempt = numbers.count(p.attempt)
    passing, total = numbers.count(p.features_passing), numbers.count(p.features_total)
    cost = numbers.money(p.cost_usd)
    return (row.state.value, _one(p.host) or "-", str(attempt or "-"), str(iteration or "-"),
            f"{passing if passing is not None else '?'}/{total}" if total is not None else "-",
            "?" if cost is None else f"${cost:.2f}", _result(row))


def _result(row: Row) -> str:
    code = numbers.count(row.progress.result) if row.progress.result is not None else None
    last = "-" if code is None else f"{code} {result_words(code)}"
    exit_code = numbers.count(row.exit_code) if row.exit_code is not None else None
    return last if exit_code is None else f"{last} · exit {exit_code}"


def _columns(name: str, cells: tuple[str, ...], name_w: int, host_w: int, mark: str) -> str:
    state, host, attempt, iteration, features, cost, result = cells
    return (f"{mark}{_fit(name, name_w)} {state:<8} {_fit(host, host_w)} {attempt:>3} "
            f"{iteration:>4} {features:>8} {cost:>8}  {result}")


def _fit(text: str, width: int) -> str:
    short = cut(text, width)
    return short + " " * (width - columns(short))


def _details(board: Board, names: list[str], width: int) -> list[str]:
    row = board.rows[board.selected]
    p = row.progress
    host = _one(p.host) or "?"
    where = (f"on {host}: {_tail(_one(p.root), width - len(host) - 5)}" if p.root
             else "no directory yet (not started)")
    opens = ("Enter: its aidd watch · " if board.here
             else "Enter: not on this machine · " if p.root else "")
    last = f"last event {_one(p.last_event)}" if p.last_event else "no event yet"
    name = names[board.selected]
    return ["── " + name + " " + "─" * max(0, width - columns(name) - 4), where,
            f"{opens}{last} · run {_one(p.run_id) or '-'}",
            _one(row.message) or f"features passing {_features(row)} · tokens {_tokens(row)}"]


def _tail(text: str, room: int) -> str:
    """A long path's end, where its project's name is."""
    return text if len(text) <= max(room, 2) else "…" + text[len(text) - max(room, 2) + 1:]


def _features(row: Row) -> str:
    passing, total = numbers.count(row.progress.features_passing), numbers.count(
        row.progress.features_total)
    return "?" if total is None else f"{passing if passing is not None else '?'} of {total}"


def _tokens(row: Row) -> str:
    tokens = numbers.count(row.progress.tokens)
    return "?" if tokens is None else f"{tokens:,}"


def _one(text: object) -> str:
    return shown(text if isinstance(text, str) else str(text), one_line=True)
