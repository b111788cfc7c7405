"""The full-screen loop of `aidd watch`: the terminal in cbreak mode on its alternate screen,
a frame redrawn when it changes, and the three keys. `s` writes `.stop` as `aidd --stop` does
(after a y/n), `r` writes the morning report; nothing else is written, locked or signalled.
The terminal's pieces (`full_screen`, `read_keys`) and the view's loop (`follow`) are
`aidd fleet watch`'s too: it opens a project's view here."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import termios
import tty
from collections.abc import Iterator, Mapping

from aidd.clock import Clock
from aidd.console import screen
from aidd.project.stop import request_stop
from aidd.watch.screen import frame, lines
from aidd.watch.source import Source

TICK_S = 0.25  # the longest a new event or a key waits for the screen
REPORT = "morning-report.html"  # under .automaker/: what `r` writes
_ENTER, _LEAVE = "\x1b[?1049h\x1b[?25l\x1b[2J", "\x1b[?25h\x1b[?1049l"
UP, DOWN = "\x1b[A", "\x1b[B"  # the arrows as `read_keys` gives them (normal or application mode)
_ARROWS = {"\x1b[A": UP, "\x1bOA": UP, "\x1b[B": DOWN, "\x1bOB": DOWN}


def print_once(source: Source, clock: Clock) -> None:
    """Not a terminal (a pipe, a file): one frame of plain lines, then exit."""
    size = shutil.get_terminal_size((80, 24))
    view = source.view(clock.now(), clock.monotonic())
    screen("\n".join(lines(view, size.columns, size.lines)) + "\n")


def watch(source: Source, clock: Clock, color: bool, environ: Mapping[str, str]) -> None:
    """Until `q` (or the terminal goes)."""
    with full_screen():
        follow(source, clock, color, environ)


def follow(source: Source, clock: Clock, color: bool, environ: Mapping[str, str]) -> None:
    """The view until `q`, on a terminal `full_screen` holds already."""
    keys = Keys(source, clock, environ)
    shown = ""
    while not keys.done:
        size = shutil.get_terminal_size((80, 24))
        view = source.view(clock.now(), clock.monotonic(), keys.message)
        text = frame(view, size.columns, size.lines, color)
        if text != shown:  # an idle run costs a frame a second (the elapsed time)
            screen(text)
            shown = text
        keys.wait(TICK_S)


def read_keys(timeout: float) -> list[str] | None:
    """The keys typed within `timeout` seconds ([] for none), each a character or an arrow
    (UP, DOWN); None when the terminal closed."""
    ready, _, _ = select.select([0], [], [], timeout)
    if not ready:
        return []
    data = os.read(0, 64)
    if not data:
        return None
    text, keys = data.decode("utf-8", "replace"), []
    while text:
        arrow = _ARROWS.get(text[:3])
        keys.append(arrow or text[0])
        text = text[3 if arrow else 1:]
    return keys


class Keys:
    """What each key does; `message` answers it on the screen's last line."""

    def __init__(self, source: Source, clock: Clock, environ: Mapping[str, str]) -> None:
        self._source = source
        self._environ = environ
        self._clock = clock
        self.message = ""
        self.done = False
        self._asking = False

    def wait(self, timeout: float) -> None:
        keys = read_keys(timeout)
        if keys is None:  # the terminal closed
            self.done = True
        for key in keys or ():
            self.press(key)

    def press(self, key: str) -> None:
        if self._asking:
            self._asking = False
            self.message = self._stop() if key in "yY" else "not stopped"
        elif key in "qQ":
            self.done = True
        elif key in "sS":
            self._asking = True
            self.message = "stop the run after its current attempt (writes .automaker/.stop)? y/n"
        elif key in "rR":
            self.message = self._report()
        elif key in "0123456789" and len(key) == 1:  # `--parallel N`: whose output is shown
            self._source.followed = int(key) or None
            self.message = f"the output of slot {key}" if int(key) else "the latest output"

    def _stop(self) -> str:
        paths = self._source.paths
        try:
            request_stop(paths.root, paths.stop, self._clock.now())
        except OSError as exc:
            return f"could not write {paths.rel(paths.stop)}: {exc}"
        if not self._source.running:  # written all the same, as `aidd --stop` does
            return f"stop requested ({paths.rel(paths.stop)}); no aidd is running on it now"
        return "stop requested: the run stops after its current attempt (exit 6)"

    def _report(self) -> str:
        # Imported here: the report's modules cost start-up time only `r` needs.
        from aidd.fsio import write_atomic
        from aidd.reports.morning.build import build_report
        from aidd.reports.morning.html import render_html

        paths = self._source.paths
        target = paths.automaker / REPORT
        try:
            report = build_report(paths, None, self._clock.now(), self._environ)
            write_atomic(target, render_html(report), root=paths.root)
        except OSError as exc:
            return f"could not write the report: {exc}"
        return f"morning report written to {paths.rel(target)}"


@contextlib.contextmanager
def full_screen(fd: int = 0) -> Iterator[None]:
    """Keys one at a time, not echoed, on the alternate screen; all restored on the way out."""
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        screen(_ENTER)
        yield
    finally:
        screen(_LEAVE)
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def is_terminal() -> bool:
    return os.isatty(0) and os.isatty(1)


