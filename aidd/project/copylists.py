"""copydirs.txt / copyfiles.txt as lists of entries: where a list is found and what its lines
say (LAY-30..32). A problem is reported through `warn` and the line skipped; nothing raises."""

from __future__ import annotations

import os
import pwd
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from aidd.resources import checkout_root

COPYDIRS = "copydirs.txt"
COPYFILES = "copyfiles.txt"
ARROW = " -> "

Warn = Callable[[str], None]


@dataclass(frozen=True)
class ListSources:
    """Where the lists may live (LAY-30); the caller reads the environment."""

    home: Path
    aidd_home: Path | None = None
    xdg_config_home: Path | None = None
    checkout: Path | None = field(default_factory=checkout_root)

    def candidates(self, name: str) -> list[Path]:
        config = self.xdg_config_home or self.home / ".config"
        dirs = [self.aidd_home, self.checkout, config / "aidd"]
        return [d / name for d in dirs if d is not None]


class Entry(NamedTuple):
    """One list line: `SRC` or `SRC -> TARGET`, with its place for messages."""

    where: str
    source: Path
    target: str


def account_home() -> Path:
    """The user's home from the password database (never $HOME: config.py owns the environment).

    Without an entry, a path that cannot exist: `~` sources are then reported missing.
    """
    try:
        return Path(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        return Path("/nonexistent")


def _entry_lines(path: Path) -> list[tuple[int, str]] | None:
    """The (line number, text) of every entry line; None when the file cannot be read."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    text = raw.decode("utf-8", "surrogateescape")
    lines = [(n, line.strip()) for n, line in enumerate(text.split("\n"), 1)]
    return [(n, line) for n, line in lines if line and not line.startswith("#")]


def find_list(
    name: str, sources: ListSources, warn: Warn | None = None
) -> tuple[Path, list[tuple[int, str]]] | None:
    """The first candidate that is a file with at least one entry (LAY-30)."""
    for candidate in sources.candidates(name):
        if not candidate.is_file():
            continue
        lines = _entry_lines(candidate)
        if lines is None and warn is not None:
            warn(f"{candidate}: cannot be read, skipped")
        if lines:
            return candidate.absolute(), lines
    return None


def _expand(src: str, home: Path) -> Path:
    if src == "~" or src.startswith("~/"):
        return home / src[2:]
    if src.startswith("~"):
        try:
            return Path(src).expanduser()  # `~user/...`: from the password database, not $HOME
        except RuntimeError:  # unknown user: the literal path, reported missing later
            return Path(src)
    return Path(src)


def parse_entries(
    list_file: Path, lines: list[tuple[int, str]], home: Path, warn: Warn
) -> list[Entry]:
    entries: list[Entry] = []
    for number, line in lines:
        where = f"{list_file}:{number}"
        parts = [p.strip() for p in line.split(ARROW)]
        if len(parts) > 2:
            warn(f"{where}: more than one '{ARROW.strip()}', line skipped")
            continue
        if not all(parts):
            warn(f"{where}: empty source or target, line skipped")
            continue
        source = Path(os.path.normpath(list_file.parent / _expand(parts[0], home)))
        target = parts[1] if len(parts) == 2 else source.name
        if not target:
            warn(f"{where}: {parts[0]} has no name to use as target, line skipped")
            continue
        entries.append(Entry(where, source, target))
    return entries
