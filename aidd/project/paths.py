"""Every path under a project's .automaker/ in one frozen record (LAY-10)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aidd.errors import NotFoundError
from aidd.fsio import UnsafePathError, check_dir, check_file


@dataclass(frozen=True)
class ProjectPaths:
    root: Path

    @property
    def automaker(self) -> Path:
        return self.root / ".automaker"

    @property
    def app_spec(self) -> Path:
        return self.automaker / "app_spec.txt"

    @property
    def changelog(self) -> Path:
        return self.automaker / "CHANGELOG.md"

    @property
    def project_structure(self) -> Path:
        return self.automaker / "project_structure.md"

    @property
    def todo(self) -> Path:
        return self.automaker / "todo.md"

    @property
    def features(self) -> Path:
        return self.automaker / "features"

    @property
    def status(self) -> Path:
        return self.automaker / "status.md"

    @property
    def iterations(self) -> Path:
        return self.automaker / "iterations"

    @property
    def events(self) -> Path:
        return self.automaker / "events.jsonl"

    @property
    def lock(self) -> Path:
        return self.automaker / "aidd.lock"

    @property
    def state(self) -> Path:
        return self.automaker / "aidd-state.json"

    @property
    def config(self) -> Path:
        return self.automaker / "aidd.yaml"

    @property
    def stop(self) -> Path:
        return self.automaker / ".stop"

    @property
    def completion_pending(self) -> Path:
        return self.automaker / ".project_completion_pending"

    @property
    def completed(self) -> Path:
        return self.automaker / ".project_completed"

    @property
    def audits(self) -> Path:
        return self.automaker / "audits"

    @property
    def audit_reports(self) -> Path:
        return self.automaker / "audit-reports"

    @property
    def roadmap(self) -> Path:
        return self.automaker / "roadmap.json"

    @property
    def project_md(self) -> Path:
        return self.automaker / "project.md"

    @property
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
