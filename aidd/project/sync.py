"""Syncing the copy lists into the project (LAY-30..36): which targets are allowed, then the
directories mirrored and the files copied. Every problem is a warning naming `file:line`,
never an exception; every write stays inside the project, outside `.git/` and aidd's files."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import NamedTuple

from aidd.fsio import TMP_PREFIX, make_dirs
from aidd.project.copylists import (
    COPYDIRS,
    COPYFILES,
    Entry,
    ListSources,
    account_home,
    find_list,
    parse_entries,
)
from aidd.project.mirror import MirrorStats, copy_file, mirror
from aidd.resources import checkout_root

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


class Message(NamedTuple):
    level: Level
    text: str


class SyncResult(NamedTuple):
    messages: tuple[Message, ...] = ()
    dirs: int = 0
    files: int = 0

    @property
    def warnings(self) -> int:
        return sum(1 for m in self.messages if m.level is Level.WARN)

    @property
    def summary(self) -> str:
        return f"synced {self.dirs} dirs, {self.files} files, {self.warnings} warnings"


class _Report:
    def __init__(self) -> None:
        self.messages: list[Message] = []

    def info(self, text: str) -> None:
        self.messages.append(Message(Level.INFO, text))

    def warn(self, text: str) -> None:
        self.messages.append(Message(Level.WARN, text))


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
    stats = MirrorStats()
    real_root = root.resolve()
    try:
        make_dirs(real_root, target.parent)  # never through a link planted meanwhile
        mirror(entry.source, target, real_root, stats)
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
    real_root = root.resolve()
    try:
        make_dirs(real_root, target.parent)
        copy_file(entry.source, target, real_root)
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
        found = find_list(name, sources, report.warn)
        done = 0
        if found is not None:
            found_any = True
            list_file, lines = found
            report.info(f"{name}: {list_file}")
            for entry in parse_entries(list_file, lines, sources.home, report.warn):
                done += _guarded(sync_one, entry, root, report)
        counts.append(done)
    result = SyncResult(tuple(report.messages), dirs=counts[0], files=counts[1])
    if not found_any:
        return result
    summary = Message(Level.INFO, result.summary)
    return SyncResult((*result.messages, summary), dirs=result.dirs, files=result.files)


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
        home=home or account_home(),
        aidd_home=aidd_home,
        xdg_config_home=xdg_config_home,
        checkout=checkout or checkout_root(),
    )
    return sync_project(root, sources)
