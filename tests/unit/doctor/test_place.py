"""The project directory, the spec, free space, and planted links, each ok and not."""

from __future__ import annotations

import os
import shutil
from collections import namedtuple
from pathlib import Path

import pytest

from aidd.config import Actions, load_settings
from aidd.doctor import place
from aidd.doctor.findings import Status
from aidd.errors import ExitCode
from aidd.project.paths import ProjectPaths
from tests.planted import plant

Usage = namedtuple("Usage", "total used free")


@pytest.mark.parametrize(("free_mib", "status"), [(5000, Status.OK), (1023, Status.WARN),
                                                   (99, Status.FAIL)])
def test_disk_thresholds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, free_mib: int,
                         status: Status) -> None:
    monkeypatch.setattr(shutil, "disk_usage", lambda _: Usage(0, 0, free_mib << 20))
    found = place.check_disk(tmp_path / "not-yet")
    assert found.status is status
    assert str(tmp_path) in found.detail  # the nearest directory that exists
    if status is Status.FAIL:
        assert found.code is ExitCode.NOT_FOUND


def test_project_dir_usable_creatable_or_not(tmp_path: Path) -> None:
    assert place.check_project_dir(tmp_path).status is Status.OK
    assert "a run creates it" in place.check_project_dir(tmp_path / "a" / "b").detail
    file = tmp_path / "file"
    file.write_text("x")
    assert place.check_project_dir(file).code is ExitCode.INVALID_ARGS


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_a_read_only_project_dir_fails_with_3(tmp_path: Path) -> None:
    locked = tmp_path / "ro"
    locked.mkdir(mode=0o500)
    found = place.check_project_dir(locked)
    assert (found.status, found.code) == (Status.FAIL, ExitCode.NOT_FOUND)
    assert place.check_project_dir(locked / "sub").code is ExitCode.NOT_FOUND


def test_a_symlinked_automaker_fails_an_odd_entry_warns(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path / "proj")
    paths.root.mkdir()
    assert place.check_links(paths).status is Status.OK
    plant(paths.automaker / "features" / "f1" / "feature.json", "fifo")
    plant(paths.automaker / "app_spec.txt", "symlink", Path("/etc/hostname"))
    found = place.check_links(paths)
    assert found.status is Status.WARN
    assert ".automaker/app_spec.txt" in found.detail
    assert ".automaker/features/f1/feature.json" in found.detail
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(paths.automaker)
    plant(paths.automaker, "symlink", elsewhere)
    found = place.check_links(paths)
    assert (found.status, found.code) == (Status.FAIL, ExitCode.NOT_FOUND)
    assert "symlink" in found.detail


def test_a_symlinked_project_dir_only_warns(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    found = place.check_links(ProjectPaths(plant(tmp_path / "link", "symlink", real)))
    assert found.status is Status.WARN
    assert str(real) in found.detail


def test_spec_given_missing_fails_needed_warns(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()

    def spec_finding(spec: str | None) -> place.Finding:
        flags = {"project-dir": root, **({"spec": tmp_path / spec} if spec else {})}
        settings = load_settings(flags, Actions(doctor=True), {"HOME": str(tmp_path)},
                                 cwd=tmp_path)
        return place.check_spec(settings, ProjectPaths(root))

    assert spec_finding("nope.md").code is ExitCode.NOT_FOUND
    (tmp_path / "spec.md").write_text("# spec\n")
    assert spec_finding("spec.md").status is Status.OK
    assert spec_finding(None).status is Status.WARN  # a new project: the first run needs one
    (root / "main.py").write_text("print()\n")
    assert spec_finding(None).status is Status.OK  # existing code
