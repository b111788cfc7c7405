"""Scaffolding (LAY-21), artifacts (LAY-23), spec copy (LAY-22); AC-14, AC-15, AC-17."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aidd.project import scaffold
from aidd.project.paths import ProjectPaths
from aidd.project.scaffold import copy_artifacts, copy_scaffolding, copy_spec
from aidd.project.todo import TodoClass, classify_line, read_todo
from aidd.resources import data_dir

RUNTIME_FILES = (
    ".automaker/iterations/",
    ".automaker/aidd.lock",
    ".automaker/.stop",
    ".automaker/events.jsonl",
    ".automaker/status.md",
)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# -- shipped data ------------------------------------------------------------------------------


def test_shipped_scaffolding_has_gitignore_and_editorconfig() -> None:
    scaffolding = data_dir("scaffolding")
    ignored = (scaffolding / ".gitignore").read_text().splitlines()
    for entry in (*RUNTIME_FILES, ".DS_Store", ".env"):
        assert entry in ignored
    assert (scaffolding / ".editorconfig").read_text().startswith("# https://editorconfig.org")


def test_shipped_artifacts_are_complete() -> None:
    artifacts = data_dir("artifacts")
    names = {p.name for p in artifacts.iterdir()}
    assert {"CHANGELOG.md", "project_structure.md", "todo.md", "features"} <= names
    assert (artifacts / "features" / ".gitkeep").is_file()


def test_shipped_todo_never_blocks_completion() -> None:
    """AC-17: no line counts as actionable, done, deferred or a TODO: marker."""
    text = (data_dir("artifacts") / "todo.md").read_text()
    assert {classify_line(line) for line in text.splitlines()} == {TodoClass.OTHER}
    summary = read_todo(data_dir("artifacts"), data_dir("artifacts") / "todo.md")
    assert summary is not None
    assert not summary.blocks
    assert summary.total == 0


def test_shipped_lists_are_comment_only() -> None:
    root = Path(__file__).resolve().parents[3]
    for name in ("copydirs.txt", "copyfiles.txt"):
        lines = [line.strip() for line in (root / name).read_text().splitlines()]
        assert lines
        assert all(not line or line.startswith("#") for line in lines)


# -- scaffolding (LAY-21, AC-15) ---------------------------------------------------------------


@pytest.fixture
def scaffolding(tmp_path: Path) -> Path:
    src = tmp_path / "scaffolding"
    _write(src / ".gitignore", "ignored\n")
    _write(src / "README.md", "readme\n")
    _write(src / "bin" / "run", "#!/bin/sh\n").chmod(0o755)
    _write(src / ".github" / "workflows" / "ci.yml", "ci\n")
    return src


def test_scaffolding_copies_everything_into_a_new_project(
    tmp_path: Path, scaffolding: Path
) -> None:
    root = tmp_path / "project"
    created = copy_scaffolding(root, scaffolding)
    assert (root / ".gitignore").read_text() == "ignored\n"
    assert (root / ".github" / "workflows" / "ci.yml").read_text() == "ci\n"
    assert (root / "bin" / "run").stat().st_mode & 0o777 == 0o755
    assert set(created) == {
        ".github/",
        ".github/workflows/",
        ".github/workflows/ci.yml",
        ".gitignore",
        "README.md",
        "bin/",
        "bin/run",
    }
    assert not list(root.rglob(".aidd-tmp-*"))


def test_scaffolding_never_overwrites(tmp_path: Path, scaffolding: Path) -> None:
    root = tmp_path / "project"
    _write(root / ".gitignore", "mine\n")
    _write(root / "bin" / "other", "keep\n")
    created = copy_scaffolding(root, scaffolding)
    assert (root / ".gitignore").read_text() == "mine\n"
    assert (root / "bin" / "run").exists()
    assert (root / "bin" / "other").read_text() == "keep\n"
    assert ".gitignore" not in created
    assert "bin/run" in created


def test_scaffolding_does_not_follow_project_symlinks(tmp_path: Path, scaffolding: Path) -> None:
    root, outside = tmp_path / "project", tmp_path / "outside"
    outside.mkdir()
    root.mkdir()
    (root / ".github").symlink_to(outside)
    (root / "README.md").symlink_to(outside / "README.md")
    copy_scaffolding(root, scaffolding)
    assert list(outside.iterdir()) == []
    assert (root / ".github").is_symlink()


def test_shipped_scaffolding_into_project(tmp_path: Path) -> None:
    created = copy_scaffolding(tmp_path)
    assert {".gitignore", ".editorconfig"} <= set(created)


# -- artifacts (LAY-23) ------------------------------------------------------------------------


def test_artifacts_are_copied_once_without_gitkeep(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    copied = copy_artifacts(paths)
    assert set(copied) == {"CHANGELOG.md", "project_structure.md", "todo.md", "features"}
    assert paths.features.is_dir()
    assert list(paths.features.iterdir()) == []
    assert paths.todo.read_bytes() == (data_dir("artifacts") / "todo.md").read_bytes()
    assert copy_artifacts(paths) == []


def test_the_shipped_artifacts_are_listed_once_a_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: every attempt copies what is missing; aidd's own folder is not listed (and
    each entry looked at) again for each."""
    scaffold._shipped_artifacts.cache_clear()
    listed: list[Path] = []
    real = scaffold._artifacts
    monkeypatch.setattr(scaffold, "_artifacts", lambda source: (listed.append(source),
                                                                real(source))[1])
    for name in ("a", "b", "c"):
        assert "todo.md" in copy_artifacts(ProjectPaths(tmp_path / name))
    assert listed == [data_dir("artifacts")]


def test_existing_artifacts_are_never_overwritten(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    _write(paths.changelog, "mine\n")
    _write(paths.features / "f1" / "feature.json", "{}")
    copied = copy_artifacts(paths)
    assert "CHANGELOG.md" not in copied
    assert "features" not in copied
    assert paths.changelog.read_text() == "mine\n"
    assert os.listdir(paths.features) == ["f1"]


def test_artifact_name_taken_by_a_symlink_is_left_alone(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    paths = ProjectPaths(tmp_path / "project")
    paths.automaker.mkdir(parents=True)
    (paths.automaker / "features").symlink_to(outside)
    (paths.automaker / "todo.md").symlink_to(outside / "todo.md")
    copied = copy_artifacts(paths)
    assert "features" not in copied
    assert "todo.md" not in copied
    assert list(outside.iterdir()) == []


def test_automaker_symlinked_outside_is_not_written(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    paths = ProjectPaths(tmp_path / "project")
    paths.root.mkdir()
    paths.automaker.symlink_to(outside)
    assert copy_artifacts(paths) == []
    assert list(outside.iterdir()) == []


# -- spec (LAY-22, AC-14) ----------------------------------------------------------------------


def test_spec_is_copied_byte_exact_and_replaced(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path / "project")
    paths.automaker.mkdir(parents=True)
    spec = tmp_path / "spec.md"
    spec.write_bytes(b"line\r\n\xff\x00 binary-ish\n")
    assert copy_spec(spec, paths)
    assert paths.app_spec.read_bytes() == spec.read_bytes()
    spec.write_bytes(b"v2")
    assert copy_spec(spec, paths)
    assert paths.app_spec.read_bytes() == b"v2"
    assert paths.app_spec.stat().st_mode & 0o777 == 0o644


def test_spec_copy_is_skipped_for_the_same_file(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    _write(paths.app_spec, "spec")
    before = paths.app_spec.stat()
    assert not copy_spec(paths.app_spec, paths)
    link = tmp_path / "link.md"
    link.symlink_to(paths.app_spec)
    assert not copy_spec(link, paths)
    assert paths.app_spec.stat().st_ino == before.st_ino
