"""Log cleaning (LOG-20..22, AC-82)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aidd.logs import cleaning as logclean
from aidd.logs.cleaning import LogCleaner, clean_bytes, clean_log, clean_stream
from tests.planted import plant, within

BOX = "─━│┌┐└┘├┤┬┴┼═║╔╗╚╝╭╮╯╰╿".encode()


def _chunked(data: bytes, cuts: list[int]) -> bytes:
    cleaner = LogCleaner()
    out, last = [], 0
    for cut in sorted(cuts):
        out.append(cleaner.feed(data[last:cut]))
        last = cut
    out.append(cleaner.feed(data[last:]))
    out.append(cleaner.finish())
    return b"".join(out)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        (b"\x1b[1;31mred\x1b[0m plain\n", b"red plain\n"),
        (b"\x1b[?25l\x1b[?1049hhidden cursor\x1b[?25h\n", b"hidden cursor\n"),
        (b"\x1b[2K\x1b[1Gprogress\n", b"progress\n"),
        (b"\x1b]0;window title\x07text\n", b"text\n"),
        (b"\x1b]8;;https://x.y\x1b\\link\x1b]8;;\x1b\\\n", b"link\n"),
        (b"\x1b(Bcharset\x1b=\x1b>\x1b7\x1b8\n", b"charset\n"),
        (b"\x1bPq#0;2;0;0;0\x1b\\dcs gone\n", b"dcs gone\n"),
        (b"bell\x07 back\x08space\x00nul\x7f\n", b"bell backspacenul\x7f\n"),
        (b"tab\tkept\n", b"tab\tkept\n"),
        (b"crlf\r\nline\r\n", b"crlf\nline\n"),
        (b"10%\r50%\r100%\n", b"10%\n50%\n100%\n"),
        (b"cr at end\r", b"cr at end\n"),
        (b"a\r\x1b[K\nb\n", b"a\nb\n"),
        (b"\xff\xfe invalid \xc3\x28 utf8\n", b"\xff\xfe invalid \xc3\x28 utf8\n"),
        (b"\x1b[1malone ESC \x1b\x01 end\n", b"alone ESC  end\n"),
    ],
)
def test_control_sequences(raw: bytes, clean: bytes) -> None:
    assert clean_bytes(raw) == clean


def test_box_drawing_only_lines_are_removed() -> None:
    raw = (
        "top\n╭────────╮\n│ inside │\n  ├──┼──┤  \n\t═══\n╰────────╯\n│\n──── text ────\nend\n"
    ).encode()
    assert clean_bytes(raw) == "top\n│ inside │\n──── text ────\nend\n".encode()


def test_blank_runs_collapse_to_one_empty_line() -> None:
    raw = b"a\n\n\n\nb\n \t\n   \nc\n\nd\n  \ne\n"
    assert clean_bytes(raw) == b"a\n\nb\n\nc\n\nd\n  \ne\n"


def test_blank_runs_across_removed_lines_collapse() -> None:
    raw = "a\n\n────\n\x1b[0m\n\nb".encode()
    assert clean_bytes(raw) == b"a\n\nb"


def test_repeated_lines_are_kept() -> None:
    raw = b"same line\nsame line\nother\nsame line\n"
    assert clean_bytes(raw) == raw


def test_unterminated_last_line_stays_unterminated() -> None:
    assert clean_bytes(b"a\nlast") == b"a\nlast"
    assert clean_bytes(b"a\n  ") == b"a\n  "
    assert clean_bytes(b"a\n\n  ") == b"a\n\n"
    assert clean_bytes(b"a\n\xe2\x94\x80") == b"a\n"
    assert clean_bytes(b"") == b""


def test_unterminated_string_sequence_keeps_its_text() -> None:
    assert clean_bytes(b"\x1b]0;no terminator\nnext\n") == b"0;no terminator\nnext\n"


SAMPLE = (
    b"\x1b]0;title\x07start\r\n\x1b[38;5;196mred\x1b[0m\r\n\xe2\x94\x80\xe2\x94\x80\r\n"
    b"\r\n\r\n\r\n\x1b]8;;u\x1b\\x\x1b]8;;\x1b\\\r\nprog 1\rprog 2\r\x1b[K\ndone\xff\n"
    b"\x1b(B\x1b[?2004l  \xe2\x95\xad\xe2\x95\xae \n"
)


def test_every_two_way_split_gives_the_same_result() -> None:
    whole = clean_bytes(SAMPLE)
    for cut in range(len(SAMPLE) + 1):
        assert _chunked(SAMPLE, [cut]) == whole, cut


def test_byte_by_byte_feed_gives_the_same_result() -> None:
    assert _chunked(SAMPLE, list(range(len(SAMPLE)))) == clean_bytes(SAMPLE)


FRAGMENTS = [
    b"\x1b", b"[", b"]", b"0;t", b"31m", b"?25l", b"\x07", b"\\", b"(B", b"P", b"=",
    b"\r", b"\n", b"\r\n", b" ", b"\t", b"a", b"word", b"\xe2\x94\x80", b"\xe2", b"\x94",
    b"\x95\xbf", b"\x00", b"\x08", b"\xff", b"\x7f",
]  # fmt: skip
_inputs = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS), max_size=60).map(b"".join),
    st.binary(max_size=200),
)


@settings(max_examples=300, deadline=None)
@given(data=_inputs)
def test_cleaning_is_idempotent_and_leaves_no_control_bytes(data: bytes) -> None:
    once = clean_bytes(data)
    assert clean_bytes(once) == once
    assert b"\x1b" not in once
    assert b"\r" not in once
    assert not any(b < 0x20 and b not in b"\t\n" for b in once)


@settings(max_examples=200, deadline=None)
@given(data=_inputs, cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=6))
def test_chunking_never_changes_the_result(data: bytes, cuts: list[int]) -> None:
    assert _chunked(data, [min(c, len(data)) for c in cuts]) == clean_bytes(data)


def test_long_candidate_lines_stay_bounded_and_idempotent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logclean, "MAX_CANDIDATE_LINE", 8)
    long_box = "─" * 10 + "\n"
    data = ("x\n" + long_box + "   \n" * 2 + "y\n").encode()
    once = clean_bytes(data)
    assert once == ("x\n" + long_box + "\ny\n").encode()
    assert clean_bytes(once) == once


def test_clean_stream_with_small_chunks(tmp_path: Path) -> None:
    src, dst = tmp_path / "in", tmp_path / "out"
    src.write_bytes(SAMPLE * 50)
    with src.open("rb") as fin, dst.open("wb") as fout:
        assert clean_stream(fin, fout, chunk_size=7)
    assert dst.read_bytes() == clean_bytes(SAMPLE * 50)


# -- files -------------------------------------------------------------------------------------


def test_clean_log_replaces_the_file_atomically(tmp_path: Path) -> None:
    log = tmp_path / "001.log"
    log.write_bytes(SAMPLE)
    log.chmod(0o640)
    assert clean_log(log) is None
    assert log.read_bytes() == clean_bytes(SAMPLE)
    assert log.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["001.log"]


def test_clean_log_leaves_an_already_clean_file_alone(tmp_path: Path) -> None:
    log = tmp_path / "001.log"
    log.write_bytes(b"clean\n")
    inode = log.stat().st_ino
    assert clean_log(log) is None
    assert log.stat().st_ino == inode


def test_a_clean_log_is_left_with_no_temp_file_made(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: each log of a run was cleaned into a new temp file at its end, then dropped
    when nothing changed (a new file costs this file system up to ~0.6 ms: one a log, one an
    attempt); a log up to one chunk is cleaned in memory and written only when it changed. A
    bigger log still streams through a temp file."""
    made: list[Path] = []
    real = logclean.atomic_file
    monkeypatch.setattr(logclean, "atomic_file",
                        lambda root, path, mode=None: made.append(path) or real(root, path, mode))
    clean, dirty, big = tmp_path / "001.log", tmp_path / "002.log", tmp_path / "003.log"
    clean.write_bytes(b"clean\n" * 1000)
    dirty.write_bytes(SAMPLE)
    big.write_bytes(SAMPLE * (logclean.CHUNK_SIZE // len(SAMPLE) + 1))
    for log in (clean, dirty, big):
        assert clean_log(log) is None
    assert made == [dirty, big]
    assert dirty.read_bytes() == clean_bytes(SAMPLE)
    assert big.read_bytes() == clean_bytes(SAMPLE * (logclean.CHUNK_SIZE // len(SAMPLE) + 1))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["001.log", "002.log", "003.log"]


def test_clean_log_failure_keeps_the_raw_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "002.log"
    log.write_bytes(SAMPLE)

    def boom(*_: object, **__: object) -> bool:
        raise OSError("disk full")

    monkeypatch.setattr(logclean, "clean_stream", boom)
    monkeypatch.setattr(logclean, "clean_bytes", boom)  # a log of one chunk (issue 33)
    warning = clean_log(log)
    assert warning == "could not clean 002.log: disk full"
    assert log.read_bytes() == SAMPLE
    assert os.listdir(tmp_path) == ["002.log"]


def test_clean_log_missing_file_is_a_warning(tmp_path: Path) -> None:
    warning = clean_log(tmp_path / "missing.log")
    assert warning is not None
    assert "missing.log" in warning
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_a_log_the_agent_swapped_for_a_fifo_or_a_link_out_is_refused_not_waited_on(
        tmp_path: Path, kind: str) -> None:
    """Cleaning runs at every run's end on the logs aidd wrote; the agent may have replaced one
    (issue 27 item 15): a FIFO never blocks the shutdown, a link out is neither read nor
    written through."""
    outside = tmp_path / "outside.log"
    outside.write_bytes(SAMPLE)
    root = tmp_path / "project"
    log = plant(root / "001.log", kind, outside)
    warning = within(5, lambda: clean_log(log, root=root), log)
    assert warning is not None
    assert warning.startswith("could not clean 001.log: ")
    assert outside.read_bytes() == SAMPLE
