"""The terminal side of aidd's output: never stops the run on a closed terminal (SUP-82)."""

from __future__ import annotations

import os
import sys
from typing import BinaryIO


class Console:
    """Writes bytes to stdout; colour only on a terminal (CLI-7); silent after a write error."""

    def __init__(self, stream: BinaryIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdout.buffer
        self._broken = False
        try:
            self.color = os.isatty(self._stream.fileno())
        except (OSError, ValueError, AttributeError):
            self.color = False

    def write(self, data: bytes) -> None:
        if self._broken or not data:
            return
        try:
            self._stream.write(data)
            self._stream.flush()
        except (OSError, ValueError):
            self._broken = True

    def line(self, text: str, style: str = "") -> None:
        if self.color and style:
            text = f"{_STYLES[style]}{text}\x1b[0m"
        self.write(text.encode("utf-8", "replace") + b"\n")


_STYLES = {"dim": "\x1b[2m", "warn": "\x1b[33m", "error": "\x1b[31m", "bold": "\x1b[1m"}


class NullConsole(Console):
    def __init__(self) -> None:
        self._broken = True
        self.color = False
