"""The keys of `aidd watch`, in-process: `s` writes `.stop` only after a `y`, `r` writes the
morning report, `q` quits; nothing else is written."""

from __future__ import annotations

from pathlib import Path

from aidd.clock import SystemClock
from aidd.project.paths import ProjectPaths
from aidd.watch.source import Source
from aidd.watch.terminal import REPORT, Keys

RUN = (Path(__file__).parent / "data" / "run.jsonl").read_text()


def _keys(tmp_path: Path) -> tuple[Keys, ProjectPaths]:
    paths = ProjectPaths(tmp_path)
    paths.automaker.mkdir()
    paths.events.write_text(RUN)
    return Keys(Source(paths), SystemClock(), {"HOME": str(tmp_path)}), paths


def test_s_asks_first_and_only_y_writes_stop(tmp_path: Path) -> None:
    keys, paths = _keys(tmp_path)
    before = sorted(paths.automaker.iterdir())
    keys.press("s")
    assert "y/n" in keys.message
    keys.press("n")
    assert keys.message == "not stopped"
    assert sorted(paths.automaker.iterdir()) == before
    keys.press("s")
    keys.press("y")
    assert paths.stop.is_file()
    assert "no aidd is running" in keys.message  # no lock here: said, and written all the same
    assert not keys.done


def test_r_writes_the_morning_report_and_q_quits(tmp_path: Path) -> None:
    keys, paths = _keys(tmp_path)
    keys.press("r")
    page = (paths.automaker / REPORT).read_text()
    assert page.startswith("<!DOCTYPE html>") or "<html" in page[:200]
    assert REPORT in keys.message
    keys.press("q")
    assert keys.done
