"""The terminal side of aidd's output: it never stops the run, whether the terminal is closed
(SUP-82) or just not reading (a full pipe, Ctrl-S, a frozen ssh session: issue 13 item 3); and
the one control-character filter every line aidd prints goes through (`shown`, `json_text`)."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import shlex
import stat
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

from aidd.errors import AiddError
from aidd.fsio import write_crash_file

# A pipe, terminal or socket is written by a thread of its own from a bounded buffer; when the
# reader falls that far behind, new output is dropped and counted, and one note says how much
# where it went missing. Timers, signals and `.stop` never wait for the terminal; the iteration
# log (written elsewhere) stays complete. A regular file or an in-memory stream cannot stall, so
# it is written directly.

CAPACITY = 4 << 20  # bytes waiting for a slow terminal before output is dropped
CLOSE_WAIT_S = 2.0  # at exit, how long a stalled terminal may hold aidd up
STATUS_S = 1.0  # how often a kept status line is drawn again
_ERASE = b"\r\x1b[K"  # back to the line's start, cleared: where the status line was


class Console:
    """Writes bytes to stdout; colour only on a terminal (CLI-7); silent after a write error."""

    def __init__(self, stream: BinaryIO | None = None, capacity: int = CAPACITY,
                 color: Callable[[bool], bool] = bool) -> None:
        """`color` says whether to colour, given whether the stream is a terminal (--color,
        NO_COLOR: Settings.colored); by default, on a terminal."""
        self._stream = stream if stream is not None else sys.stdout.buffer
        self._broken = False
        self._fd = _stallable_fd(self._stream)
        try:
            terminal = os.isatty(self._stream.fileno())
        except (OSError, ValueError, AttributeError):
            terminal = False
        self.color = color(terminal)
        self._capacity = capacity
        # what waits for the writer, as written: a flood's 256 KiB batches are handed over
        # without a copy into one buffer and another out of it (issue 33)
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._dropped = 0
        self._closed = False
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self.terminal = terminal
        # `--console compact` (issue 30): after the first attempt's banner, one header line
        # per attempt (logs/transcript), and a status line kept at the bottom of a terminal.
        self.compact = False
        self.banner_shown = False
        self._status_of: Callable[[], str] | None = None
        self._status_shown = False
        if self._fd is not None:
            with contextlib.suppress(OSError, ValueError):
                self._stream.flush()  # what was written before us comes first
            self._thread = threading.Thread(target=self._drain, name="aidd-console", daemon=True)
            self._thread.start()
            atexit.register(self.close)

    def write(self, data: bytes) -> None:
        if self._broken or not data:
            return
        if self._fd is None:
            self._write_direct(data)
            return
        with self._wake:
            if self._status_of is not None:
                data = self._around_status(data)
            if self._pending_size + len(data) > self._capacity:
                self._dropped += len(data)
                return
            if self._dropped:
                self._queue(_dropped_note(self._dropped))
                self._dropped = 0
            self._queue(bytes(data))  # the same object when it is bytes: never copied
            self._wake.notify()

    def _queue(self, data: bytes) -> None:
        """For the writer thread; the caller holds `_wake`."""
        self._pending.append(data)
        self._pending_size += len(data)

    def line(self, text: str, style: str = "") -> None:
        """One of aidd's own lines (messages, header, rendered events), filtered (`shown`);
        the agent's bytes take `write` and are mirrored as they are (LOG-5)."""
        self.lines([(text, style)])

    def lines(self, texts: Sequence[tuple[str, str]]) -> None:
        """Several of aidd's lines (text, style), as `line` writes each, in one write."""
        out = []
        for text, style in texts:
            text = shown(text)
            out.append(f"{_STYLES[style]}{text}\x1b[0m" if self.color and style else text)
        self.write("".join(f"{line}\n" for line in out).encode("utf-8", "replace"))

    def keep_status(self, text: Callable[[], str]) -> None:
        """One status line at the bottom of a terminal (`--console compact`): `text()` drawn
        after each write that ends a line, erased before the next, redrawn each second; cut to
        the terminal's width (a wrapped line could not be erased). Nothing on a non-terminal."""
        if self.terminal and self._fd is not None:
            with self._wake:
                self._status_of = text
                self._wake.notify()

    def _around_status(self, data: bytes) -> bytes:
        lead = _ERASE if self._status_shown else b""
        self._status_shown = data.endswith(b"\n")
        return lead + data + (self._status() if self._status_shown else b"")

    def _status(self) -> bytes:
        status_of = self._status_of
        if status_of is None or self._fd is None:
            return b""
        try:  # a terminal that says 0 columns (a bare pty) is taken as 80
            width = os.get_terminal_size(self._fd).columns or 80
        except OSError:
            width = 80
        try:
            text = shown(status_of(), one_line=True)
        except Exception:  # a status that fails is no status, never a stopped run
            text = ""
        return text[:max(0, width - 1)].encode("utf-8", "replace")

    def close(self, wait_s: float = CLOSE_WAIT_S) -> None:
        """Let the writer finish what is queued, waiting at most `wait_s` for the terminal."""
        if self._thread is None:
            return
        with self._wake:
            if self._status_shown:
                self._queue(_ERASE)
            self._status_of, self._status_shown = None, False
            if self._dropped:
                self._queue(_dropped_note(self._dropped))
                self._dropped = 0
            self._closed = True
            self._wake.notify()
        self._thread.join(wait_s)

    def _write_direct(self, data: bytes) -> None:
        try:
            self._stream.write(data)
            self._stream.flush()
        except (OSError, ValueError):
            self._broken = True

    def _drain(self) -> None:
        assert self._fd is not None
        while True:
            with self._wake:
                while not self._pending and not self._closed:
                    if self._status_of is None:
                        self._wake.wait()
                    elif not self._wake.wait(STATUS_S) and self._status_shown:
                        self._queue(_ERASE + self._status())  # the elapsed time moves
                if not self._pending:
                    return
                parts, self._pending, self._pending_size = self._pending, [], 0
            chunk = parts[0] if len(parts) == 1 else b"".join(parts)
            try:
                view = memoryview(chunk)
                while view:  # raw fd writes: no stream lock held if exit comes mid-write
                    view = view[os.write(self._fd, view):]
            except OSError:
                self._broken = True
                return


def _stallable_fd(stream: BinaryIO) -> int | None:
    """The fd of a pipe, terminal or socket (a reader can stall it); None for anything else."""
    try:
        fd = stream.fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError, AttributeError):
        return None
    return None if stat.S_ISREG(mode) or stat.S_ISBLK(mode) else fd


def _dropped_note(count: int) -> bytes:
    return (f"\n[aidd] {count} bytes of console output dropped (the terminal was not reading; "
            "the iteration log has them)\n").encode()


# What a terminal acts on instead of showing (issue 27 item 7): C0 controls (ESC starts every
# escape sequence: OSC 52 writes the clipboard, CSI clears the screen; CR and BS overwrite what
# was shown), DEL, C1 controls (U+009B is a CSI on its own), lone surrogates (no UTF-8 carries
# them) and the bidirectional overrides (text that reads otherwise than it is). Tab and newline
# are layout, except in a one-line field.
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[{_CONTROLS}]")
_UNSAFE_IN_A_LINE = re.compile(f"[\t\n{_CONTROLS}]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def shown(text: str, *, one_line: bool = False) -> str:
    """`text` as a terminal may show it: each character it would act on written as an escape
    (`\\x1b`, `\\r`, `\\u009b`), the rest as it is."""
    return (_UNSAFE_IN_A_LINE if one_line else _UNSAFE).sub(_escape, text)


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}")


def json_text(value: object) -> str:
    """`value` as the JSON a one-shot action prints: UTF-8 as it is, but what `shown` escapes
    as a JSON escape (`\\u009b`; json.dumps leaves C1, DEL and the rest raw): the same value to
    a JSON reader, inert on a terminal."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return _UNSAFE.sub(lambda found: f"\\u{ord(found.group()):04x}", text) + "\n"


def print_out(text: str) -> None:
    """A one-shot action's report on stdout, filtered (`shown`). A stdout that cannot take it
    (/dev/full, a closed pipe) is a one-line error, not a crash (issue 13 item 13)."""
    try:
        sys.stdout.write(shown(text))
        sys.stdout.flush()
    except (OSError, ValueError) as exc:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115, PTH123 - a sink for exit
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise AiddError(f"cannot write to standard output ({why})") from None


def screen(text: str) -> None:
    """A full-screen view's frame (`aidd watch`), escape sequences and all: its caller built
    it from lines each filtered by `shown`. A terminal that cannot take it is let go: the view
    is redrawn in a moment, or its user has left."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.write(text)
        sys.stdout.flush()


def print_err(text: str, style: str = "", color: Callable[[bool], bool] = bool) -> None:
    """A line for the user on standard error (`aidd: error: ...`, a warning of a one-shot),
    in `style` where `color` says so for a terminal (or not); a standard error that cannot take
    it (closed, full) is let go: nothing is left to tell."""
    text = shown(text)  # it may quote the project (a path, a feature's name)
    with contextlib.suppress(OSError, ValueError):
        if style and color(sys.stderr.isatty()):
            body = text.rstrip("\n")
            text = f"{_STYLES[style]}{body}\x1b[0m{text[len(body):]}"
        sys.stderr.write(text)
        sys.stderr.flush()


def flush_standard() -> None:
    """Flush standard output and error (before a process leaves without its teardown)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def shell_line(command: str | Sequence[str]) -> str:
    """How aidd shows a command, the one way (console lines, events, reports, the doctor): a
    command line given as a string exactly as written (/bin/sh runs it as is), an argv quoted
    for a shell (`shlex.join`); a control character (a multi-line gate's newline) is escaped,
    so the command stays on its line."""
    text = command if isinstance(command, str) else shlex.join(command)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def program_of(command: str) -> str | None:
    """The program a /bin/sh command line starts: its first word after any `VAR=value` (which
    may hold a token); None when it has none. Raises ValueError when its quotes do not close."""
    for word in shlex.split(command):
        name, eq, _ = word.partition("=")
        if not (eq and name.isidentifier()):
            return word
    return None


def aidd_command(project: Path, *args: str) -> str:
    """An aidd command line a person can paste anywhere (a "to undo" or "next" line): the
    project named by its absolute path."""
    return shell_line(["aidd", *args, "--project-dir", os.path.normpath(project.absolute())])


def report_traceback(exc: BaseException, root: Path | None) -> Path | None:
    """Keep an internal error's traceback for the user (REL-20): in a new crash file under
    `root/.automaker`, else (no project, a full disk) on standard error. The crash file, or
    None when it went to standard error."""
    # Imported here: traceback (with tokenize and linecache) costs ~5 ms of every start-up
    # (measured with -X importtime), and only a crash needs it.
    import traceback

    text = "".join(traceback.format_exception(exc))
    path = write_crash_file(root, text) if root is not None else None
    if path is None:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(text)
            sys.stderr.flush()
    return path


_STYLES = {"dim": "\x1b[2m", "warn": "\x1b[33m", "error": "\x1b[31m", "bold": "\x1b[1m"}
