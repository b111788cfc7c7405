"""Where a run's words go: aidd's lines (to the open attempt log, which mirrors them to the
console, or else to the console), events.jsonl, and the report of an unexpected error."""

from __future__ import annotations

from pathlib import Path
from traceback import format_exception

from aidd.clock import Clock
from aidd.console import Console, report_traceback
from aidd.events import EventLog
from aidd.logs.transcript import Transcript, message_prefix, message_style


class Journal:
    def __init__(self, console: Console, events: EventLog, clock: Clock, root: Path,
                 tag: str = "") -> None:
        self.console = console
        self.tag = tag  # a slot's console lines start with it (`[slot 2] `); "" with one agent
        self.events = events
        self._clock = clock
        self._root = root
        self._log: Transcript | None = None
        self.logs_written: list[Path] = []  # closed attempt logs, cleaned at the run's end

    # -- the attempt log -----------------------------------------------------------------
    @property
    def log(self) -> Transcript | None:
        return self._log

    def open_log(self, path: Path) -> Transcript:
        """From now on aidd's lines go to this attempt's log (and through it the console)."""
        self.close_log()
        self._log = Transcript(path, self.console, self._clock.now, root=self._root,
                               tag=self.tag)
        return self._log

    def close_log(self, renamed: str | None = None) -> None:
        """Close the open log; `renamed` replaces its `.log` suffix (a rate-limited attempt's
        log is kept as NNN.ratelimited.log, SUP-50)."""
        log, self._log = self._log, None
        if log is None:
            return
        log.close()
        path = log.path
        if renamed:
            path = path.rename(path.with_name(path.name.removesuffix(".log") + renamed))
        self.logs_written.append(path)

    # -- messages and events --------------------------------------------------------------
    def say(self, text: str, level: str = "") -> None:
        if self._log is not None:
            self._log.message(text, level)
            return
        prefix = message_prefix(self._clock.now(), level)
        for line in text.splitlines() or [""]:
            self.console.line(self.tag + prefix + line, message_style(level))

    def warn(self, text: str, file: str | None = None) -> None:
        self.say(text, level="WARN")
        self.events.emit("warning", message=text, file=file)

    # -- an unexpected error ---------------------------------------------------------------
    def report_crash(self, exc: BaseException) -> Path:
        """The traceback goes to the open attempt log, else to a crash file, else (a full
        disk) to standard error; returns where it went."""
        if self._log is not None:
            try:
                self._log.message(f"internal error: {exc!r}", level="ERROR")
                self._log.message("".join(format_exception(exc)).rstrip(), level="ERROR")
                return self._log.path
            except OSError:  # the log itself failed (disk full, REL-21): use a crash file
                pass
        return report_traceback(exc, self._root) or Path("standard error (above)")
