"""`--parallel N`: a slot's console lines start with its slot; its log, and the console of one
agent (no tag), are what they were byte for byte."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

from aidd.console import Console
from aidd.logs import transcript
from aidd.logs.transcript import Transcript

NOW = datetime(2026, 11, 27, 1, 2, 3, tzinfo=UTC)


def _attempt(tmp_path: Path, name: str, tag: str) -> tuple[bytes, bytes]:
    out = io.BytesIO()
    console = Console(out)
    log = Transcript(tmp_path / name, console, lambda: NOW, root=tmp_path, tag=tag)
    log.header(["aidd x", "Iteration 1"], "iteration 1")
    log.agent(b"first line\nhalf ")
    log.agent(b"a line\n")
    log.rendered("tool: write a.txt")
    log.agent(b"no newline at the end")
    log.message("finished", "WARN")
    log.close()
    console.close()
    return out.getvalue(), (tmp_path / name).read_bytes()


def test_a_slot_tags_every_console_line_and_leaves_its_log_alone(tmp_path: Path) -> None:
    plain_console, plain_log = _attempt(tmp_path, "001.log", "")
    slot_console, slot_log = _attempt(tmp_path, "002.log", "[slot 2] ")
    assert slot_log == plain_log
    assert plain_console == (b"[aidd] aidd x\n[aidd] Iteration 1\nfirst line\nhalf a line\n"
                             b"\xc2\xbb tool: write a.txt\nno newline at the end\n"
                             b"[aidd 01:02:03] WARN finished\n")
    lines = slot_console.decode().splitlines()
    assert all(line.startswith("[slot 2] ") for line in lines), lines
    assert [line.removeprefix("[slot 2] ") for line in lines] == \
        plain_console.decode().splitlines()


def test_a_header_and_a_trailer_are_one_write_each_to_log_and_console(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: 15 header lines were 15 writes to the log and 15 wakes of the console's
    thread an attempt; the bytes are the same."""
    out = io.BytesIO()
    console = Console(out, color=lambda _: True)
    log = Transcript(tmp_path / "001.log", console, lambda: NOW, root=tmp_path)
    written: list[bytes] = []
    shown: list[bytes] = []
    monkeypatch.setattr(transcript, "write_all", lambda fd, data: written.append(data))
    real = console.write
    monkeypatch.setattr(console, "write", lambda data: (shown.append(data), real(data)))
    log.header([f"line {n}" for n in range(15)], "summary")
    log.plain(["--- trailer", "result 0", "two\nlines"])
    assert written == [
        "".join(f"[aidd] line {n}\n" for n in range(15)).encode(),
        b"[aidd] --- trailer\n[aidd] result 0\n[aidd] two\n[aidd] lines\n"]
    assert len(shown) == 2
    assert out.getvalue().endswith(b"\x1b[1m[aidd] --- trailer\x1b[0m\n[aidd] result 0\n"
                                   b"[aidd] two\n[aidd] lines\n")
