"""The real `aidd` run from a test: its supervision limits, a run in the background, and what a
run leaves in the project's `.automaker/`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.featurefiles import feature

REPO = Path(__file__).resolve().parents[2]

# Limits for runs whose fake agent answers at once: far above what such a run needs, yet one
# gone wrong ends in seconds instead of after aidd's default hour.
LIMITS = ("--idle-nudge-timeout", "5", "--idle-timeout", "10", "--timeout", "30")
# Limits for runs whose agent stays silent for many seconds on purpose (it sleeps while the
# test acts, or a second aidd runs beside it): no nudge or idle kill may come first.
WIDE_LIMITS = ("--idle-nudge-timeout", "20", "--idle-timeout", "40", "--timeout", "60")

# Fake agent scripts: an attempt that succeeds (it calls a tool: exit 0 without one, without a
# change and with so little text is no work, 75), and one that fails with exit status 3.
READ: dict[str, Any] = {"tool": {"name": "read", "input": {"path": "README.md"}}}
OK: list[dict[str, Any]] = [READ, {"say": "done"}, {"finish": True}]
FAIL: list[dict[str, Any]] = [{"say": "broken"}, {"exit": 3}]
# An attempt that asks aidd to stop, as a guard that ends a run gone wrong.
STOP: list[dict[str, Any]] = [{"write_file": ".automaker/.stop", "text": "now"}]
# Agent output holding everything LOG-21 cleans away, plus lines it must keep (a repeated line
# stays twice).
NOISE = ("\x1b[1;31mred\x1b[0m text\n"
         "\x1b]0;window title\x07after the title\n"
         "┌──────────┐\n"
         "│ boxed    │\n"
         "└──────────┘\n"
         "\n\n\n\n"
         "same line\n"
         "same line\n"
         "NOISE-END\n")


@dataclass
class Result:
    code: int
    out: str
    err: str


RunAidd = Callable[..., Result]
CONSOLE = "aidd-console.txt"


@contextmanager
def started(env: dict[str, str], cwd: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """The real aidd in the background (for signals and files from outside while it runs); its
    console goes to `console(cwd)`, a file, which never fills up like an unread pipe."""
    with (cwd / CONSOLE).open("ab") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "aidd", *args], env=env, cwd=cwd,
                                stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT)
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def console(cwd: Path) -> str:
    """What the runs `started` in `cwd` wrote to stdout and stderr."""
    return (cwd / CONSOLE).read_text(errors="replace")


# -- what a run leaves -------------------------------------------------------------------------
def tree_snapshot(root: Path) -> set[str]:
    """Every path under `root` (to prove a failed run wrote nothing)."""
    if not root.exists():
        return set()
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def events(root: Path, name: str | None = None) -> list[dict[str, Any]]:
    """The project's events.jsonl, all or those named `name`."""
    lines = (root / ".automaker" / "events.jsonl").read_text().splitlines()
    found = [json.loads(line) for line in lines]
    return [e for e in found if name is None or e["event"] == name]


def iterations(root: Path) -> Path:
    return root / ".automaker" / "iterations"


def log(root: Path, number: int = 1) -> str:
    return (iterations(root) / f"{number:03d}.log").read_text(errors="replace")


def prompt(root: Path, number: int = 1) -> str:
    return (iterations(root) / f"{number:03d}.prompt.md").read_text()


def file_has(path: Path, text: str) -> Callable[[], bool]:
    """A check for `wait_for`: `path` exists and holds `text`."""
    return lambda: path.exists() and text in path.read_text(errors="replace")


def has_event(root: Path, name: str) -> Callable[[], bool]:
    """A check for `wait_for`: the run has emitted an event `name`."""
    return file_has(root / ".automaker" / "events.jsonl", f'"event": "{name}"')


# -- what a run starts from ----------------------------------------------------------------------
def onboarded(root: Path) -> None:
    """app_spec.txt and CHANGELOG.md: with a feature.json, onboarding is complete (LAY-17)."""
    (root / ".automaker").mkdir(exist_ok=True)
    (root / ".automaker" / "app_spec.txt").write_text("spec\n")
    (root / ".automaker" / "CHANGELOG.md").write_text("# Changelog\n")


def complete_project(root: Path) -> None:
    """What a finished project holds: one passing feature, a spec copy and a changelog."""
    feature(root, description="a", status="completed", passes=True)
    onboarded(root)
