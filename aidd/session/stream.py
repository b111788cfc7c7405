"""Agent bytes to the transcript and the parser, in order (SUP-12, LOG-3, LOG-5, ADP-35).

Every chunk reaches the log at once, partial line included. Each complete line then goes
to the parser, and its rendered lines follow the raw line, never inside it. Raw JSON lines
stay out of the console; everything else the agent prints is echoed.
"""

from __future__ import annotations

from typing import Protocol

from aidd.agents.base import LineParser

# A line longer than this is not buffered for the parser (it still reaches the log whole).
MAX_LINE = 8 << 20
# How much of a plain partial line `wants` sees again with the next chunk: enough for a keyword
# split between two chunks, without copying a huge line for every chunk (quadratic).
_BOUNDARY = 64


class Sink(Protocol):
    def agent(self, data: bytes, *, echo: bool = True) -> None: ...

    def rendered(self, text: str) -> None: ...


class StreamRouter:
    def __init__(self, sink: Sink, parser: LineParser) -> None:
        self._sink = sink
        self._parser = parser
        self._line = bytearray()  # the current line so far
        self._line_plain = True  # `wants` said no to everything in `_line`
        self._overflow = False
        self._hidden = False  # the current line is a raw JSON line (log only)
        self._at_start = True
        self._pending: list[bytes] = []  # raw bytes not yet written, all with one echo setting
        self._pending_hidden = False
        self.bytes = 0

    def feed(self, chunk: bytes) -> None:
        self.bytes += len(chunk)
        if self._plain(chunk):
            self._skip(chunk)
            return
        start = 0
        while (newline := chunk.find(b"\n", start)) >= 0:
            self._raw(chunk[start : newline + 1])
            self._complete()
            start = newline + 1
        if start < len(chunk):
            self._raw(chunk[start:])
            # a new partial line the parser does not want: the next chunk may take the fast
            # path again (else one JSON line sent every later chunk through the slow path)
            if start and not _safe_wants(self._parser, chunk[start:]):
                self._line_plain = True
        self._flush()

    def finish(self) -> None:
        """End of this stream: a final partial line is parsed too."""
        self._flush()
        if not self._at_start:
            self._complete()

    def _plain(self, chunk: bytes) -> bool:
        """Nothing in the current line or this chunk can matter to the parser."""
        if (self._hidden and not self._at_start) or self._overflow:
            return False
        if self._line and not self._line_plain:
            return False
        if self._line and _safe_wants(self._parser,
                                      bytes(self._line[-_BOUNDARY:]) + chunk[:_BOUNDARY]):
            return False  # a keyword split between the two chunks
        return not _safe_wants(self._parser, chunk)

    def _skip(self, chunk: bytes) -> None:
        """The fast path for plain text: echo it whole, keep only the partial last line."""
        self._sink.agent(chunk, echo=True)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            self._line[:] = chunk[newline + 1 :]
        elif len(self._line) + len(chunk) > MAX_LINE:
            self._overflow = True  # never parsed: the rest of this line goes to the log only
            self._line.clear()
        else:
            self._line += chunk
        self._line_plain = True
        self._at_start = not self._line and not self._overflow
        self._hidden = False

    def _raw(self, segment: bytes) -> None:
        if self._at_start:
            self._hidden = segment.startswith(b"{")
            self._at_start = False
        if self._pending and self._pending_hidden != self._hidden:
            self._flush()
        self._pending.append(segment)
        self._pending_hidden = self._hidden
        if self._overflow:
            return
        if len(self._line) + len(segment) > MAX_LINE:
            self._overflow = True
            self._line.clear()
        else:
            self._line += segment
            self._line_plain = False

    def _complete(self) -> None:
        line = bytes(self._line).removesuffix(b"\n").removesuffix(b"\r")
        self._line.clear()
        overflow, self._overflow, self._at_start = self._overflow, False, True
        rendered = [] if overflow else _safe(self._parser, line)
        if rendered:
            self._flush()
            for text in rendered:
                for part in text.split("\n"):
                    self._sink.rendered(part)

    def _flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            self._sink.agent(data, echo=not self._pending_hidden)


def _safe_wants(parser: LineParser, data: bytes) -> bool:
    try:
        return parser.wants(data)
    except Exception:  # be safe: parse everything
        return True


def _safe(parser: LineParser, line: bytes) -> list[str]:
    try:
        return parser.line(line)
    except Exception:  # parsers must not raise (ADP-35); if one does, the line stays raw
        return []
