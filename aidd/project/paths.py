"""Every path under a project's .automaker/ in one frozen record (LAY-10)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from aidd.errors import NotFoundError
from aidd.fsio import UnsafePathError, check_dir, check_file


@dataclass(frozen=True)
class ProjectPaths:
    """Each path is made at its first use and kept: a `Path` join costs microseconds, and a
    run's iteration asked for ~60 of them (issue 33)."""

    root: Path

    @cached_property
    def automaker(self) -> Path:
        return self.root / ".automaker"

    @cached_property
    def app_spec(self) -> Path:
        return self.automaker / "app_spec.txt"

    @cached_property
    def changelog(self) -> Path:
        return self.automaker / "CHANGELOG.md"

    @cached_property
    def project_structure(self) -> Path:
        return self.automaker / "project_structure.md"

    @cached_property
    def todo(self) -> Path:
        return self.automaker / "todo.md"

    @cached_property
    def features(self) -> Path:
        return self.automaker / "features"

    @cached_property
    def status(self) -> Path:
        return self.automaker / "status.md"

    @cached_property
    def iterations(self) -> Path:
        return self.automaker / "iterations"

    @cached_property
    def events(self) -> Path:
        return self.automaker / "events.jsonl"

    @cached_property
    def lock(self) -> Path:
        return self.automaker / "aidd.lock"

    @cached_property
    def state(self) -> Path:
        return self.automaker / "aidd-state.json"

    @cached_property
    def config(self) -> Path:
        return self.automaker / "aidd.yaml"

    @cached_property
    def stop(self) -> Path:
        return self.automaker / ".stop"

    @cached_property
    def completion_pending(self) -> Path:
        return self.automaker / ".project_completion_pending"

    @cached_property
    def completed(self) -> Path:
        return self.automaker / ".project_completed"

    @cached_property
    def audits(self) -> Path:
        return self.automaker / "audits"

    @cached_property
    def audit_reports(self) -> Path:
        return self.automaker / "audit-reports"

    @cached_property
    def roadmap(self) -> Path:
        return self.automaker / "roadmap.json"

    @cached_property
    def project_md(self) -> Path:
        return self.automaker / "project.md"

    @cached_property
    def prompt_overrides(self) -> Path:
        return self.automaker / "prompts"

    def log(self, number: int, suffix: str = ".log") -> Path:
        """`iterations/NNN<suffix>`: three digits, more when needed (LOG-1)."""
        return self.iterations / f"{number:03d}{suffix}"

    def rel(self, path: Path) -> str:
        """Project-relative form for messages and prompts."""
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)


def check_layout(paths: ProjectPaths) -> None:
    """`.automaker` and the directories aidd writes into must be real directories, not links a
    cloned repository planted (issue 13 item 1): refused before anything is written."""
    try:
        for directory in (paths.automaker, paths.iterations, paths.audits):
            check_dir(paths.root, directory)
        check_file(paths.events)  # appended to from the first event on
    except UnsafePathError as exc:
        raise NotFoundError(f"refused: {exc}") from None
