"""`--parallel N`: a slot's console lines start with its slot; its log, and the console of one
agent (no tag), are what they were byte for byte."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

from aidd.console import Console
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
