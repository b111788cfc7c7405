"""The liveness check: signals seen, no /proc children lists, a tree past the inotify limit,
output only."""

from __future__ import annotations

from pathlib import Path

import pytest

from aidd.config import Actions, Settings, load_settings
from aidd.doctor import livecheck
from aidd.doctor.findings import Status
from aidd.session import procfs


def _settings(tmp_path: Path, *flags: str) -> Settings:
    given = dict(zip(flags[::2], flags[1::2], strict=True))
    return load_settings({"project-dir": tmp_path, **given}, Actions(),
                         {"HOME": str(tmp_path / "home")}, cwd=tmp_path)


def test_signals_are_seen_here(tmp_path: Path) -> None:
    (tmp_path / "src" / "lib").mkdir(parents=True)
    found = livecheck.check_liveness(_settings(tmp_path), tmp_path)
    assert found.status is Status.OK
    assert "(3 directories)" in found.detail


def test_without_proc_children_the_cpu_is_not_seen(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(procfs, "children_known", lambda: False)
    found = livecheck.check_liveness(_settings(tmp_path), tmp_path)
    assert (found.status, found.failed) == (Status.WARN, False)
    assert "CPU is not seen" in found.detail


def test_a_tree_past_the_watch_limit_is_judged_without_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limit = tmp_path / "max_user_watches"
    limit.write_text("3\n")
    monkeypatch.setattr(livecheck, "_WATCHES", limit)
    for name in "abcd":
        (tmp_path / "p" / name).mkdir(parents=True)
    found = livecheck.check_liveness(_settings(tmp_path), tmp_path / "p")
    assert found.status is Status.WARN
    assert "more than 3 directories" in found.detail
    assert "max_user_watches" in found.fix


def test_output_only_needs_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(procfs, "children_known", lambda: False)
    found = livecheck.check_liveness(_settings(tmp_path, "liveness", "output"), tmp_path)
    assert found.status is Status.OK
    assert "output only" in found.detail
