"""`aidd watch` dispatched by cli.main: one frame when not on a terminal, errors as aidd's."""

from __future__ import annotations

from pathlib import Path

import pytest

from aidd.cli import main
from aidd.errors import ExitCode

RUN = (Path(__file__).parent / "data" / "run.jsonl").read_text()


def test_not_on_a_terminal_it_prints_one_frame(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".automaker").mkdir()
    (tmp_path / ".automaker" / "events.jsonl").write_text(RUN)
    assert main(["watch", "--project-dir", str(tmp_path)]) == ExitCode.SUCCESS
    out = capsys.readouterr().out
    assert out.startswith("aidd watch · ended: done, exit 0")
    assert "\x1b" not in out
    assert sorted(p.name for p in (tmp_path / ".automaker").iterdir()) == ["events.jsonl"]


def test_a_project_without_automaker_and_a_bad_flag_are_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["watch", "--project-dir", str(tmp_path)]) == ExitCode.NOT_FOUND
    assert "no aidd run to watch" in capsys.readouterr().err
    assert main(["watch", "--bogus"]) == ExitCode.INVALID_ARGS
    assert "aidd: error:" in capsys.readouterr().err
