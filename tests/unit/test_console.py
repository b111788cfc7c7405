"""The console never blocks: a stalled pipe fills a bounded buffer, the rest is dropped and
counted in one note at the place it went missing, in order (issue 13 item 3). Its one filter
shows every character a terminal would act on as an escape (issue 27 item 7)."""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

import pytest

from aidd.console import Console, json_text, report_traceback, shown


def _drain(fd: int, until: bytes = b"", quiet_s: float = 0.3) -> bytes:
    """Read what arrives until `until` is seen (or, without it, until `quiet_s` of quiet)."""
    got = b""
    last = time.monotonic()
    while time.monotonic() - last < (10 if until else quiet_s):
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            time.sleep(0.01)
            continue
        got += chunk
        last = time.monotonic()
        if until and until in got:
            break
    return got


def test_a_stalled_pipe_never_blocks_and_the_drop_is_noted_in_order() -> None:
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    stream = os.fdopen(write_end, "wb")
    console = Console(stream, capacity=200_000)
    start = time.monotonic()
    for i in range(100):  # 10 MB against a 64 KiB pipe nobody reads
        console.write(bytes([65 + i % 26]) * 100_000)
    assert time.monotonic() - start < 2.0
    got = _drain(read_end)  # the reader wakes up and catches up
    console.line("after the flood")
    got += _drain(read_end, until=b"after the flood")
    console.close()
    stream.close()
    os.close(read_end)
    assert got.startswith(b"A" * 1000)
    assert b"bytes of console output dropped" in got
    assert got.index(b"dropped") < got.index(b"after the flood")
    assert len(got) < 1_000_000


def test_an_in_memory_stream_is_written_at_once() -> None:
    sink = io.BytesIO()
    console = Console(sink)
    console.write(b"abc")
    console.line("line")
    assert sink.getvalue() == b"abcline\n"


def test_a_flood_reaches_a_pipe_as_written_never_copied(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 256 KiB batch of agent output goes to the terminal as the object it came as: no copy
    into a buffer and out of it (issue 33: two copies per batch, a tenth of a flood's routing)."""
    written: list[object] = []
    real_write = os.write

    def spy(fd: int, data: memoryview) -> int:
        written.append(data.obj)
        return real_write(fd, data)

    monkeypatch.setattr("aidd.console.os.write", spy)
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    stream = os.fdopen(write_end, "wb")
    console = Console(stream)
    batch = b"x" * (256 << 10)
    console.write(batch)
    got = _drain(read_end, until=b"x" * len(batch))
    console.close()
    stream.close()
    os.close(read_end)
    assert got == batch
    assert written[0] is batch


def test_a_closed_reader_silences_the_console() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    stream = os.fdopen(write_end, "wb")
    console = Console(stream)
    console.write(b"x" * 10)  # EPIPE in the writer thread (SIGPIPE is ignored by Python)
    console.close()
    console.write(b"more")
    stream.close()


def _raised() -> ValueError:
    try:
        raise ValueError("boom")
    except ValueError as exc:
        return exc


def test_a_traceback_goes_to_a_crash_file_else_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".automaker").mkdir()
    path = report_traceback(_raised(), tmp_path)
    assert path is not None
    assert path.parent == tmp_path / ".automaker"
    assert "ValueError: boom" in path.read_text()
    assert capsys.readouterr().err == ""
    assert report_traceback(_raised(), tmp_path / "no-project") is None
    assert report_traceback(_raised(), None) is None
    assert capsys.readouterr().err.count("ValueError: boom") == 2


ACTED_ON = [chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0),
                             0xD800, 0xDFFF, 0x202E, 0x2066]]


def test_every_character_a_terminal_acts_on_is_shown_escaped() -> None:
    for char in ACTED_ON:
        escaped = shown(f"a{char}b")
        assert escaped.isascii(), repr(char)
        assert escaped.isprintable(), repr(char)
        assert escaped[1:-1] in (f"\\x{ord(char):02x}", f"\\u{ord(char):04x}", "\\r")
    assert shown("\x1b]52;c;cHduZWQ=\x07") == "\\x1b]52;c;cHduZWQ=\\x07"  # OSC 52: inert
    assert shown("\x9b2J") == "\\u009b2J"
    kept = "tab\tnew\nline café 日本 👍🏽 a\u00a0b \\x1b"
    assert shown(kept) == kept
    assert shown("a\tb\nc", one_line=True) == "a\\tb\\nc"


def test_json_text_escapes_what_json_dumps_leaves_raw_and_reads_back_the_same() -> None:
    value = {"name": "".join(ACTED_ON[:-4]) + "café", "\x9b": [1, "\u202e"]}
    text = json_text(value)
    assert not any(char in text for char in ACTED_ON)
    assert json.loads(text) == value
    assert "café" in text  # UTF-8 as it is
    assert text.endswith("}\n")


def test_a_console_line_is_filtered_and_raw_bytes_are_not() -> None:
    out = io.BytesIO()
    console = Console(out)
    console.line("feature \x1b[2Jx")
    console.write(b"\x1b[31magent\x1b[0m\n")  # the agent's own bytes: mirrored (LOG-5)
    assert out.getvalue() == b"feature \\x1b[2Jx\n\x1b[31magent\x1b[0m\n"
