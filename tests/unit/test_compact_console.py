"""`--console compact` (issue 30): the banner once then one header line per attempt, and a
status line kept at the bottom of a terminal, never on a non-terminal."""

from __future__ import annotations

import io
import os
import select
import time
from datetime import UTC, datetime
from pathlib import Path

from aidd.cli import parse_args
from aidd.console import Console
from aidd.logs.transcript import Transcript

ERASE = b"\r\x1b[K"


def _read_until(fd: int, marker: bytes, timeout: float = 10) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.05)[0]:
            seen += os.read(fd, 1 << 16)
    return seen.replace(b"\r\n", b"\n")  # the terminal's own newline translation


def test_a_terminal_keeps_the_status_line_below_every_line() -> None:
    reader, writer = os.openpty()
    with os.fdopen(writer, "wb", buffering=0) as stream:
        console = Console(stream)
        state = {"n": 1}
        console.keep_status(lambda: f"STATUS {state['n']} \x1b[2J")
        console.line("first")
        state["n"] = 2
        console.write(b"partial ")
        console.write(b"line\n")
        seen = _read_until(reader, b"STATUS 2")
        console.close()
        seen += _read_until(reader, b"STATUS 2" + ERASE, 5)
    os.close(reader)
    assert seen.startswith(b"first\n" + b"STATUS 1 \\x1b[2J" + ERASE + b"partial line\n")
    assert b"\x1b[2J" not in seen  # the status text is filtered like any line
    assert seen.endswith(ERASE)  # closing erases it


def test_the_status_line_moves_each_second_while_nothing_is_written() -> None:
    reader, writer = os.openpty()
    with os.fdopen(writer, "wb", buffering=0) as stream:
        console = Console(stream)
        ticks = iter(range(1000))
        console.keep_status(lambda: f"TICK {next(ticks)}")
        console.line("only line")
        seen = _read_until(reader, b"TICK 2", 10)
        console.close()
    os.close(reader)
    assert b"TICK 1" in seen
    assert b"TICK 2" in seen


def test_a_non_terminal_gets_no_status_line() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "wb", buffering=0) as stream:
        console = Console(stream)
        console.keep_status(lambda: "STATUS")
        console.line("a line")
        console.close()
    with os.fdopen(read_end, "rb") as pipe:
        assert pipe.read() == b"a line\n"


def test_the_header_is_whole_in_the_log_and_one_line_after_the_banner(tmp_path: Path) -> None:
    out = io.BytesIO()
    console = Console(out)
    console.compact = True
    now = datetime(2026, 11, 27, tzinfo=UTC)
    for number in (1, 2):
        log = Transcript(tmp_path / f"{number:03d}.log", console, lambda: now, root=tmp_path)
        log.header(["aidd x", f"Iteration {number}", "Project: p"], f"iteration {number}")
        log.close()
        assert (tmp_path / f"{number:03d}.log").read_text() == (
            f"[aidd] aidd x\n[aidd] Iteration {number}\n[aidd] Project: p\n")
    assert out.getvalue().decode() == ("[aidd] aidd x\n[aidd] Iteration 1\n[aidd] Project: p\n"
                                       "[aidd] iteration 2\n")


def test_the_flag_takes_bash_or_compact_and_bash_is_the_default(tmp_path: Path) -> None:
    base = ["--project-dir", str(tmp_path)]
    env = {"HOME": str(tmp_path)}
    settings = parse_args(base, env)
    assert settings is not None
    assert settings.console == "bash"
    settings = parse_args([*base, "--console", "compact"], env)
    assert settings is not None
    assert settings.console == "compact"
