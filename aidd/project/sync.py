"""copydirs.txt / copyfiles.txt: find the lists, parse them, check targets, copy (LAY-30..36).

Sync problems are warnings naming `file:line`; nothing here raises for them. Every write lands
strictly inside the project, outside `.git/`, and never through a symlink (REL-4).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import BinaryIO

from aidd.fsio import TMP_PREFIX, UnsafePathError, make_dirs
from aidd.resources import checkout_root

COPYDIRS = "copydirs.txt"
COPYFILES = "copyfiles.txt"
ARROW = " -> "
# Never copied into a copydirs target and never deleted from it, at any depth (LAY-35).
EXCLUDED = frozenset(
    {
        "node_modules",
        ".git",
        "bun.lock",
        "bun.lockb",
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
    }
)
_PROTECTED_DIRS = ((".git",), (".automaker",), (".automaker", "iterations"))
# aidd's own run files and the feature metadata: a copy list may not overwrite them (issue 13).
_RUNTIME = frozenset({"aidd.lock", "events.jsonl", "aidd-state.json", "status.md", ".stop",
                      ".project_completion_pending", ".project_completed", "iterations",
                      "features", "audits"})
_RUNTIME_PREFIXES = ("aidd-crash", TMP_PREFIX)  # crash files, aidd's temp files


class Level(StrEnum):
    """The `level` argument of `Transcript.message`."""

    INFO = ""
    WARN = "WARN"


@dataclass(frozen=True)
class Message:
    level: Level
    text: str


@dataclass(frozen=True)
class SyncResult:
    messages: tuple[Message, ...] = ()
    dirs: int = 0
    files: int = 0

    @property
    def warnings(self) -> int:
        return sum(1 for m in self.messages if m.level is Level.WARN)

    @property
    def summary(self) -> str:
        return f"synced {self.dirs} dirs, {self.files} files, {self.warnings} warnings"


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


@dataclass(frozen=True)
class Entry:
    """One list line: `SRC` or `SRC -> TARGET`, with its place for messages."""

    where: str
    source: Path
    target: str


class _Report:
    def __init__(self) -> None:
        self.messages: list[Message] = []

    def info(self, text: str) -> None:
        self.messages.append(Message(Level.INFO, text))

    def warn(self, text: str) -> None:
        self.messages.append(Message(Level.WARN, text))


# -- finding and parsing the lists ---------------------------------------------------------


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
    name: str, sources: ListSources, report: _Report | None = None
) -> tuple[Path, list[tuple[int, str]]] | None:
    """The first candidate that is a file with at least one entry (LAY-30)."""
    for candidate in sources.candidates(name):
        if not candidate.is_file():
            continue
        lines = _entry_lines(candidate)
        if lines is None and report is not None:
            report.warn(f"{candidate}: cannot be read, skipped")
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
    list_file: Path, lines: list[tuple[int, str]], home: Path, report: _Report
) -> list[Entry]:
    entries: list[Entry] = []
    for number, line in lines:
        where = f"{list_file}:{number}"
        parts = [p.strip() for p in line.split(ARROW)]
        if len(parts) > 2:
            report.warn(f"{where}: more than one '{ARROW.strip()}', line skipped")
            continue
        if not all(parts):
            report.warn(f"{where}: empty source or target, line skipped")
            continue
        source = Path(os.path.normpath(list_file.parent / _expand(parts[0], home)))
        target = parts[1] if len(parts) == 2 else source.name
        if not target:
            report.warn(f"{where}: {parts[0]} has no name to use as target, line skipped")
            continue
        entries.append(Entry(where, source, target))
    return entries


# -- target safety (LAY-33) ----------------------------------------------------------------


def _inside(path: Path, root: Path) -> bool:
    return path != root and root in path.parents


def _overlap(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


def resolve_target(entry: Entry, root: Path, mirror: bool) -> tuple[Path | None, str]:
    """The real target path, or None and the reason it is refused."""
    relative = Path(entry.target)
    if relative.is_absolute() or ".." in relative.parts:
        return None, "target must be a relative path without '..'"
    real_root = root.resolve()
    target = (real_root / relative).resolve()  # through every existing symlink on the way
    why = _refusal(target, real_root, entry.source.resolve(), mirror)
    return (None, why) if why else (target, "")


def _refusal(target: Path, real_root: Path, source: Path, mirror: bool) -> str | None:
    if target == real_root:
        return "target is the project root"
    if not _inside(target, real_root):
        return "target resolves outside the project"
    parts = tuple(p.casefold() for p in target.relative_to(real_root).parts)
    checks = (
        (parts[0] == ".git", "target is inside .git"),
        (parts[0] == ".automaker" and len(parts) > 1
         and (parts[1] in _RUNTIME or parts[1].startswith(_RUNTIME_PREFIXES)),
         "target is one of aidd's run files or the feature metadata"),
        (
            mirror and any(p[: len(parts)] == parts for p in _PROTECTED_DIRS),
            "a copydirs target must not be or contain .git, .automaker or .automaker/iterations",
        ),
        (_overlap(source, target) if mirror else source == target, "source and target overlap"),
    )
    return next((why for bad, why in checks if bad), None)


# -- copying ---------------------------------------------------------------------------------


def copy_file(src: Path, dst: Path) -> None:
    """Stream `src` into a temp file next to `dst`, keep mode bits and mtime, rename (LAY-12)."""
    with _open_source(src) as inp:
        info = os.fstat(inp.fileno())
        fd, name = tempfile.mkstemp(prefix=TMP_PREFIX, dir=dst.parent)  # O_EXCL: never a link
        tmp = Path(name)
        try:
            with os.fdopen(fd, "wb") as out:
                shutil.copyfileobj(inp, out, 1024 * 1024)
                out.flush()
                os.fsync(out.fileno())
            tmp.chmod(stat.S_IMODE(info.st_mode))
            os.utime(tmp, ns=(info.st_atime_ns, info.st_mtime_ns))
            tmp.replace(dst)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise


def _open_source(src: Path) -> BinaryIO:
    """`src` opened without blocking and checked on the open file: a FIFO (which would block
    the copy for ever, issue 13 item 7) or a device is refused, with no stat/open race."""
    fd = os.open(src, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafePathError(src, "is not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _same(src: os.DirEntry[str], dst: Path) -> bool:
    try:
        a, b = src.stat(follow_symlinks=False), dst.lstat()
    except OSError:
        return False
    return stat.S_ISREG(b.st_mode) and a.st_size == b.st_size and a.st_mtime_ns == b.st_mtime_ns


@dataclass
class _MirrorStats:
    copied: int = 0
    deleted: int = 0


def _remove(path: Path, stats: _MirrorStats) -> None:
    """Delete a file, symlink or directory, keeping excluded names inside it (LAY-35)."""
    if path.is_symlink() or not path.is_dir():
        path.unlink()
        stats.deleted += 1
        return
    for child in path.iterdir():
        if child.name not in EXCLUDED:
            _remove(child, stats)
    with contextlib.suppress(OSError):  # still holds excluded entries: keep it
        path.rmdir()


def _make_dir(path: Path, stats: _MirrorStats) -> None:
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        _remove(path, stats)
    path.mkdir(exist_ok=True)


def mirror(src: Path, dst: Path, stats: _MirrorStats) -> None:
    """Make `dst` hold exactly the regular files of `src`, minus EXCLUDED (LAY-35)."""
    _make_dir(dst, stats)
    wanted: set[str] = set()
    with os.scandir(src) as entries:
        for entry in entries:
            if entry.name in EXCLUDED or entry.is_symlink():
                continue
            target = dst / entry.name
            if entry.is_dir(follow_symlinks=False):
                wanted.add(entry.name)
                mirror(Path(entry.path), target, stats)
            elif entry.is_file(follow_symlinks=False):
                wanted.add(entry.name)
                if not _same(entry, target):
                    if target.is_symlink() or target.is_dir():
                        _remove(target, stats)
                    copy_file(Path(entry.path), target)
                    stats.copied += 1
    for child in list(dst.iterdir()):
        if child.name not in wanted and child.name not in EXCLUDED:
            _remove(child, stats)


# -- the two lists -------------------------------------------------------------------------


def _sync_dir(entry: Entry, root: Path, report: _Report) -> bool:
    if not entry.source.is_dir():
        what = "is not a directory" if entry.source.exists() else "does not exist"
        report.warn(f"{entry.where}: source {entry.source} {what}, skipped")
        return False
    target, why = resolve_target(entry, root, mirror=True)
    if target is None:
        report.warn(f"{entry.where}: {entry.target}: {why}, skipped")
        return False
    if target.exists() and not target.is_dir():
        report.warn(f"{entry.where}: target {entry.target} exists and is not a directory, skipped")
        return False
    stats = _MirrorStats()
    try:
        make_dirs(root.resolve(), target.parent)  # never through a link planted meanwhile
        mirror(entry.source, target, stats)
    except OSError as exc:
        report.warn(f"{entry.where}: copying {entry.source} to {entry.target} failed: {exc}")
        return False
    report.info(
        f"copydirs: {entry.source} -> {entry.target} "
        f"({stats.copied} copied, {stats.deleted} deleted)"
    )
    return True


def _sync_file(entry: Entry, root: Path, report: _Report) -> bool:
    if not entry.source.exists():
        report.warn(f"{entry.where}: source {entry.source} does not exist, skipped")
        return False
    if entry.source.is_dir():
        report.warn(f"{entry.where}: source {entry.source} is a directory, skipped")
        return False
    target, why = resolve_target(entry, root, mirror=False)
    if target is None:
        report.warn(f"{entry.where}: {entry.target}: {why}, skipped")
        return False
    if target.is_dir():
        report.warn(f"{entry.where}: target {entry.target} is a directory, skipped")
        return False
    try:
        make_dirs(root.resolve(), target.parent)
        copy_file(entry.source, target)
    except OSError as exc:
        report.warn(f"{entry.where}: copying {entry.source} to {entry.target} failed: {exc}")
        return False
    report.info(f"copyfiles: {entry.source} -> {entry.target}")
    return True


def _guarded(
    sync_one: Callable[[Entry, Path, _Report], bool], entry: Entry, root: Path, report: _Report
) -> bool:
    """One entry; an unexpected filesystem error (a symlink loop, an odd name) is a warning."""
    try:
        return sync_one(entry, root, report)
    except (OSError, RuntimeError, ValueError) as exc:
        report.warn(f"{entry.where}: {entry.target}: {exc}, skipped")
        return False


def sync_project(root: Path, sources: ListSources) -> SyncResult:
    """Directories first, then files (LAY-36). Never raises for a sync problem.

    When a list was found, the last message is the summary line.
    """
    report = _Report()
    counts = []
    found_any = False
    for name, sync_one in ((COPYDIRS, _sync_dir), (COPYFILES, _sync_file)):
        found = find_list(name, sources, report)
        done = 0
        if found is not None:
            found_any = True
            list_file, lines = found
            report.info(f"{name}: {list_file}")
            for entry in parse_entries(list_file, lines, sources.home, report):
                done += _guarded(sync_one, entry, root, report)
        counts.append(done)
    result = SyncResult(tuple(report.messages), dirs=counts[0], files=counts[1])
    if not found_any:
        return result
    summary = Message(Level.INFO, result.summary)
    return SyncResult((*result.messages, summary), dirs=result.dirs, files=result.files)


def _account_home() -> Path:
    """The user's home from the password database (never $HOME: config.py owns the environment).

    Without an entry, a path that cannot exist: `~` sources are then reported missing.
    """
    try:
        return Path(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        return Path("/nonexistent")


def sync_lists(
    root: Path,
    *,
    aidd_home: Path | None,
    xdg_config_home: Path | None,
    home: Path | None = None,
    checkout: Path | None = None,
) -> SyncResult:
    """Convenience entry for the loop: `checkout` defaults to the running checkout's root."""
    sources = ListSources(
        home=home or _account_home(),
        aidd_home=aidd_home,
        xdg_config_home=xdg_config_home,
        checkout=checkout or checkout_root(),
    )
    return sync_project(root, sources)
