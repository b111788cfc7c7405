"""One attempt's NNN.log and its console mirror (LOG-3, LOG-5, LOG-6): the agent's bytes
unchanged, and every line aidd adds starting with `[aidd` or `» ` on a line of its own."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from aidd.console import Console
from aidd.fsio import open_append, write_all

_LEVEL_STYLE = {"": "dim", "WARN": "warn", "ERROR": "error"}


def message_prefix(now: datetime, level: str = "") -> str:
    """How every line aidd says begins, in a log or on the console: `[aidd HH:MM:SS] `, then
    the level (WARN, ERROR) if any."""
    return f"[aidd {now.strftime('%H:%M:%S')}] " + (f"{level} " if level else "")


def message_style(level: str) -> str:
    return _LEVEL_STYLE.get(level, "dim")


class Transcript:
    def __init__(self, path: Path, console: Console, now: Callable[[], datetime], *,
                 root: Path, tag: str = "") -> None:
        self.path = path
        # `--parallel N`: each console line of a slot starts with it (`[slot 2] `); the log,
        # the slot's own, stays as with one agent
        self._tag = tag
        self._fd = open_append(root, path)  # a planted link or hard link is refused (fsio)
        self._console = console
        self._now = now
        self._log_at_line_start = True
        self._console_at_line_start = True
        # the stop watcher may add a message from its thread (SUP-90)
        self._lock = threading.Lock()

    # -- agent output --------------------------------------------------------------------
    def agent(self, data: bytes, *, echo: bool = True) -> None:
        """Raw agent bytes: always to the log; to the console when `echo`."""
        if not data:
            return
        with self._lock:
            self._agent(data, echo)

    def _agent(self, data: bytes, echo: bool) -> None:
        self._write(data)
        self._log_at_line_start = data.endswith(b"\n")
        if echo:
            self._console.write(self._tagged(data) if self._tag else data)
            self._console_at_line_start = data.endswith(b"\n")

    def _tagged(self, data: bytes) -> bytes:
        """The tag at the start of every console line the agent's bytes begin."""
        tag = self._tag.encode("utf-8")
        head = tag if self._console_at_line_start else b""
        return head + data[:-1].replace(b"\n", b"\n" + tag) + data[-1:]

    def rendered(self, text: str) -> None:
        """A line rendered from a structured event (`» `), to log and console."""
        self._aidd_lines("» ", [(text, "")])

    # -- aidd's own lines ----------------------------------------------------------------
    def message(self, text: str, level: str = "") -> None:
        """`[aidd HH:MM:SS] [WARN|ERROR ]text`."""
        self._aidd_lines(message_prefix(self._now(), level), [(text, message_style(level))])

    def plain(self, texts: Sequence[str]) -> None:
        """Header and trailer lines: `[aidd] text`, in one write."""
        self._aidd_lines("[aidd] ", [(t, "bold" if t.startswith("---") else "") for t in texts])

    def header(self, lines: list[str], summary: str) -> None:
        """The attempt's header: whole in the log; on the console too, except on a compact one
        (`--console compact`) after the run's first (its banner): there, `summary` alone."""
        brief = self._console.compact and self._console.banner_shown
        self._console.banner_shown = True
        self._aidd_lines("[aidd] ", [(line, "") for line in lines], echo=not brief)
        if brief:
            self._aidd_lines("[aidd] ", [(summary, "bold")], log=False)

    def _aidd_lines(self, prefix: str, texts: Sequence[tuple[str, str]], *, echo: bool = True,
                    log: bool = True) -> None:
        """Every line gets the prefix, so dropping the prefixed lines (LOG-4) recovers the agent's
        bytes exactly. `texts`: (text, its console style); all of them one write to the log
        and one to the console (a header is 15 lines an attempt)."""
        lines = [(prefix + part, style) for text, style in texts
                 for part in (text.splitlines() or [""])]
        with self._lock:
            if log:
                lead = b"" if self._log_at_line_start else b"\n"
                self._write(lead + "".join(f"{ln}\n" for ln, _ in lines).encode(
                    "utf-8", "replace"))
                self._log_at_line_start = True
            if not echo:
                return
            if not self._console_at_line_start:
                self._console.write(b"\n")
                self._console_at_line_start = True
            self._console.lines([(self._tag + line, style) for line, style in lines])

    def _write(self, data: bytes) -> None:
        write_all(self._fd, data)

    def close(self) -> None:
        """Not fsynced, as events.jsonl is not: a kill cannot lose what was written, a power
        loss the log's last lines at most (docs/decisions.md "Speed")."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
