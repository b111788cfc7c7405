"""`aidd fleet watch`: every project of the fleet on one screen, from the server's progress
(`control.fleet_status`: one query per refresh, every REFRESH_S), a selection moved by the
arrows or j/k, and `Enter` opening the selected project's `aidd watch` when its directory is on
this machine. The terminal, its keys and the project's view are aidd.watch's."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from temporalio.client import Client

from aidd.clock import Clock
from aidd.console import screen
from aidd.fleet.board import Board, frame, lines
from aidd.fleet.control import Known, Row, fleet_status
from aidd.fleet.progress import this_host
from aidd.project.paths import ProjectPaths
from aidd.watch.source import Source
from aidd.watch.terminal import DOWN, TICK_S, UP, follow, read_keys

REFRESH_S = 2.0  # the "at least every 2 s": one query to the server each
QUERY_S = 10.0  # a query that takes longer is given up; the last rows stay, marked
_ENTER = ("\r", "\n")

Runner = Callable[[Coroutine[Any, Any, list[Row]]], list[Row]]


@dataclass
class Fleet:
    """What the screen shows, refreshed from the server."""

    where: str  # the server, as the title names it
    fleet: str | None  # only this fleet's projects
    rows: tuple[Row, ...] = ()
    selected: int = 0
    updated: str = "not asked yet"
    message: str = ""
    done: bool = False
    known: Known = field(default_factory=Known)  # what the next query need not decode again

    def refresh(self, client: Client, run: Runner, clock: Clock) -> None:
        """One query; the selection stays on its project (by workflow id) when it can."""
        chosen = self.rows[self.selected].workflow_id if self.rows else None
        try:
            rows = tuple(run(_asked(fleet_status(client, self.fleet, self.known))))
        except Exception as err:  # the server restarting, the network: asked again next time
            why = str(err).splitlines()[0] if str(err) else err.__class__.__name__
            self.message = f"the server could not be asked ({why}); asking again"
            return
        if self.message.startswith("the server could not be asked"):
            self.message = ""
        ids = [row.workflow_id for row in rows]
        self.rows = rows
        self.selected = ids.index(chosen) if chosen in ids else min(self.selected,
                                                                   max(0, len(rows) - 1))
        self.updated = clock.now().astimezone().strftime("%H:%M:%S")

    def board(self, here: bool) -> Board:
        count = f"{len(self.rows)} project{'' if len(self.rows) == 1 else 's'}"
        title = f"{count} · server {self.where} · updated {self.updated}"
        return Board(self.rows, self.selected, title, here, self.message)

    def move(self, step: int) -> None:
        self.selected = max(0, min(len(self.rows) - 1, self.selected + step))
        self.message = ""


async def _asked(query: Coroutine[Any, Any, list[Row]]) -> list[Row]:
    async with asyncio.timeout(QUERY_S):
        return await query


def local_root(row: Row, environ: Mapping[str, str]) -> Path | None:
    """The project's directory when it is on this machine: the server says it ran here (its
    host is this machine's name in the fleet) in an absolute directory that has `.automaker/`.
    The server's word is untrusted: the view it opens only reads, and writes nothing but what
    its keys ask for (`.stop`, the morning report), inside that directory."""
    p = row.progress
    if not isinstance(p.root, str) or not p.root or p.host != this_host(environ):
        return None
    root = Path(p.root)
    try:
        return root if root.is_absolute() and (root / ".automaker").is_dir() else None
    except (OSError, ValueError):  # a NUL in the name, a path too long
        return None


def watch(fleet: Fleet, client: Client, run: Runner, clock: Clock, color: bool,
          environ: Mapping[str, str]) -> None:
    """Until `q` (or the terminal goes), on a terminal `full_screen` holds."""
    shown, asked_at = "", None
    while not fleet.done:
        if asked_at is None or clock.monotonic() - asked_at >= REFRESH_S:
            asked_at = clock.monotonic()
            fleet.refresh(client, run, clock)
        here = bool(fleet.rows) and local_root(fleet.rows[fleet.selected], environ) is not None
        size = shutil.get_terminal_size((80, 24))
        text = frame(fleet.board(here), size.columns, size.lines, color)
        if text != shown:
            screen(text)
            shown = text
        keys = read_keys(max(0.0, min(TICK_S, asked_at + REFRESH_S - clock.monotonic())))
        if keys is None:
            return
        for key in keys:
            if press(fleet, key, environ, clock, color):
                shown = ""  # the project's view was on the screen: draw it all again


def press(fleet: Fleet, key: str, environ: Mapping[str, str], clock: Clock,
          color: bool) -> bool:
    """What a key does; True when it opened a project's view (now closed again)."""
    if key in "qQ":
        fleet.done = True
    elif key in (UP, "k"):
        fleet.move(-1)
    elif key in (DOWN, "j"):
        fleet.move(1)
    elif key in _ENTER and fleet.rows:
        row = fleet.rows[fleet.selected]
        root = local_root(row, environ)
        if root is None:
            fleet.message = _elsewhere(row, environ)
            return False
        follow(Source(ProjectPaths(root)), clock, color, environ)
        fleet.message = ""
        return True
    return False


def _elsewhere(row: Row, environ: Mapping[str, str]) -> str:
    p = row.progress
    if not p.root:
        return f"{row.project} has not started yet: no directory to watch"
    if p.host != this_host(environ):
        return f"{row.project} runs on {p.host}, not on this machine ({this_host(environ)})"
    return f"{row.project}: {p.root} has no .automaker/ here"


def plain(fleet: Fleet, client: Client, run: Runner, clock: Clock,
          environ: Mapping[str, str]) -> str:
    """Not a terminal: one frame of plain lines, every project in it."""
    fleet.refresh(client, run, clock)
    here = bool(fleet.rows) and local_root(fleet.rows[fleet.selected], environ) is not None
    size = shutil.get_terminal_size((80, 24))
    height = max(size.lines, len(fleet.rows) + 8)
    return "\n".join(lines(fleet.board(here), size.columns, height)) + "\n"
