"""Log cleaning (LOG-20..22): strip terminal control bytes, box-drawing lines and blank runs.
Works on bytes (invalid UTF-8 is kept) and streams with bounded memory."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path
from typing import BinaryIO

from aidd.fsio import atomic_file, open_read

# Two stages: `_ControlStripper` removes escape sequences and C0 controls and turns every `\r`
# into a line break; `_LineFilter` drops box-drawing-only lines and collapses runs of blank
# lines. Both carry their state across chunk boundaries, so the result never depends on how the
# input was split.

CHUNK_SIZE = 256 * 1024
_MAX_STRING = 4096  # longest OSC/DCS body we recognise; real titles and hyperlinks are far shorter
# A line longer than this that holds only whitespace/box characters is kept as content, so memory
# stays bounded; the decision depends only on the line, never on chunking, so cleaning stays
# idempotent.
MAX_CANDIDATE_LINE = 1024 * 1024

# Sequences contain no ESC except the `ESC \` string terminator, so a cut before an ESC that starts
# an incomplete sequence never splits a match. Lengths are bounded so the carry stays small.
_STRING_BODY = rb"[^\x07\x1b\r\n]{0,%d}" % _MAX_STRING
_SEQUENCE = re.compile(
    rb"\x1b\[[\x30-\x3f]{0,256}[\x20-\x2f]{0,16}[\x40-\x7e]"  # CSI, private modes included
    + rb"|\x1b[\]PX^_]"
    + _STRING_BODY
    + rb"(?:\x07|\x1b\\)"  # OSC, DCS, SOS, PM, APC
    + rb"|\x1b[\x20-\x2f]{0,16}[\x30-\x7e]"  # other ESC sequences: ESC ( B, ESC =, ESC 7, ...
)
_SEQUENCE_PREFIX = re.compile(
    rb"\x1b(?:\[[\x30-\x3f]{0,256}[\x20-\x2f]{0,16}"
    + rb"|[\]PX^_]"
    + _STRING_BODY
    + rb"\x1b?"
    + rb"|[\x20-\x2f]{0,16})"
)
_MAX_SEQUENCE = 2 + _MAX_STRING + 2
# C0 controls except tab, newline and carriage return (handled separately); ESC left over from a
# malformed sequence goes too.
_DROP = bytes(b for b in range(0x20) if b not in b"\t\n\r")

_BLANK = re.compile(rb"[ \t]*")
_BOX_LINE = re.compile(rb"[ \t]*(?:\xe2[\x94\x95][\x80-\xbf][ \t]*)+")  # U+2500..U+257F
_CANDIDATE = re.compile(rb"(?:[ \t]|\xe2[\x94\x95][\x80-\xbf])*(?:\xe2[\x94\x95]?)?")


class _ControlStripper:
    """Stage 1: escape sequences and C0 controls out, `\\r\\n` and lone `\\r` to `\\n`."""

    def __init__(self) -> None:
        self._carry = b""
        self._pending_cr = False

    def feed(self, data: bytes, final: bool = False) -> bytes:
        buf = self._carry + data
        cut = len(buf) if final else _cut_point(buf)
        self._carry = buf[cut:]
        text = _SEQUENCE.sub(b"", buf[:cut]).translate(None, _DROP)
        if self._pending_cr:
            text = b"\r" + text
        self._pending_cr = text.endswith(b"\r") and not final
        if self._pending_cr:
            text = text[:-1]  # it may still pair with a `\n` in the next chunk
        return text.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def _cut_point(buf: bytes) -> int:
    """Where the unprocessed tail starts: the first ESC that opens a sequence still incomplete."""
    start = max(0, len(buf) - _MAX_SEQUENCE)
    pos = buf.find(b"\x1b", start)
    while pos != -1:
        if _SEQUENCE_PREFIX.fullmatch(buf, pos):
            return pos
        pos = buf.find(b"\x1b", pos + 1)
    return len(buf)


class _LineFilter:
    """Stage 2: drop box-drawing-only lines; a run of 2+ blank lines becomes one empty line.

    A line is held back only while it could still be blank or box-only; once it has other
    content it streams straight through.
    """

    def __init__(self) -> None:
        self._partial = bytearray()
        self._streaming = False
        self._blank_run = 0
        self._first_blank = b""
        self._out: list[bytes] = []

    def feed(self, data: bytes) -> bytes:
        pieces = data.split(b"\n")
        for piece in pieces[:-1]:
            self._segment(piece, line_end=True)
        self._segment(pieces[-1], line_end=False)
        return self._take()

    def finish(self) -> bytes:
        line = bytes(self._partial)  # the last line had no newline
        self._partial.clear()
        if _BOX_LINE.fullmatch(line) or not line:
            self._flush_blanks()
        elif _BLANK.fullmatch(line) is None:
            self._flush_blanks()
            self._out.append(line)
        elif self._blank_run == 0:
            self._out.append(line)  # a lone blank line stays as it was, unterminated
        else:
            self._blank_run += 1
            self._flush_blanks()
        return self._take()

    def _segment(self, piece: bytes, line_end: bool) -> None:
        if self._streaming:
            self._out.append(piece + b"\n" if line_end else piece)
            self._streaming = not line_end
            return
        self._partial += piece
        if len(self._partial) > MAX_CANDIDATE_LINE or not _CANDIDATE.fullmatch(self._partial):
            self._content(line_end)
        elif line_end:
            self._end_candidate()

    def _content(self, line_end: bool) -> None:
        self._flush_blanks()
        self._out.append(bytes(self._partial) + (b"\n" if line_end else b""))
        self._partial.clear()
        self._streaming = not line_end

    def _end_candidate(self) -> None:
        line = bytes(self._partial)
        if _BOX_LINE.fullmatch(line):
            self._partial.clear()
            return
        if _BLANK.fullmatch(line) is None:  # e.g. a truncated box character
            self._content(line_end=True)
            return
        self._partial.clear()
        self._blank_run += 1
        if self._blank_run == 1:
            self._first_blank = line

    def _flush_blanks(self) -> None:
        if self._blank_run == 1:
            self._out.append(self._first_blank + b"\n")
        elif self._blank_run > 1:
            self._out.append(b"\n")
        self._blank_run = 0

    def _take(self) -> bytes:
        out = b"".join(self._out)
        self._out.clear()
        return out


class LogCleaner:
    """Streaming cleaner: `feed` chunks in any split, then `finish`; output chunks come back."""

    def __init__(self) -> None:
        self._controls = _ControlStripper()
        self._lines = _LineFilter()

    def feed(self, data: bytes) -> bytes:
        return self._lines.feed(self._controls.feed(data))

    def finish(self) -> bytes:
        return self._lines.feed(self._controls.feed(b"", final=True)) + self._lines.finish()


def clean_bytes(data: bytes) -> bytes:
    """Clean a whole buffer (tests, small inputs)."""
    cleaner = LogCleaner()
    return cleaner.feed(data) + cleaner.finish()


def clean_stream(src: BinaryIO, dst: BinaryIO, chunk_size: int = CHUNK_SIZE) -> bool:
    """Copy `src` to `dst` cleaned; True when the output differs from the input."""
    cleaner = LogCleaner()
    seen_in, seen_out = hashlib.blake2b(), hashlib.blake2b()
    while chunk := src.read(chunk_size):
        seen_in.update(chunk)
        out = cleaner.feed(chunk)
        seen_out.update(out)
        dst.write(out)
    out = cleaner.finish()
    seen_out.update(out)
    dst.write(out)
    return seen_in.digest() != seen_out.digest()


def clean_log(path: Path, *, root: Path | None = None) -> str | None:
    """Clean one log in place, atomically (`root`: the project, default the log's directory);
    on any failure keep the raw log and return a warning."""
    root = root or path.parent
    try:  # the agent may have put a FIFO or a link out of the project there (fsio)
        with open_read(root, path) as src:
            mode = stat.S_IMODE(os.fstat(src.fileno()).st_mode)
            whole = src.read(CHUNK_SIZE + 1)
            if len(whole) <= CHUNK_SIZE:  # cleaned in memory: a temp file only for a change
                if (cleaned := clean_bytes(whole)) != whole:  # (a new file each, issue 33)
                    with atomic_file(root, path, mode) as out:
                        out.file.write(cleaned)
                return None
            src.seek(0)
            with atomic_file(root, path, mode) as out:
                if not clean_stream(src, out.file):
                    out.discard()  # already clean: leave the file (and its inode) alone
    # Cleaning runs on every exit path (EXIT-6), signals included: whatever goes wrong, the raw
    # log must survive and the shutdown must go on.
    except Exception as exc:
        return f"could not clean {path.name}: {exc}"
    return None
