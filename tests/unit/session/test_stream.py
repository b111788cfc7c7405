"""Raw bytes, parsed lines and rendered lines in the right order (SUP-12, LOG-3, ADP-35)."""

from __future__ import annotations

import io
from datetime import datetime
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from aidd.agents.base import Signals
from aidd.console import Console
from aidd.logs.transcript import Transcript
from aidd.session.stream import StreamRouter


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def agent(self, data: bytes, *, echo: bool = True) -> None:
        self.calls.append(("raw", (data, echo)))

    def rendered(self, text: str) -> None:
        self.calls.append(("rendered", text))


class EchoParser:
    """Renders `{...}` lines as `seen <n>`; records every line it gets."""

    def __init__(self) -> None:
        self.signals = Signals()
        self.lines: list[bytes] = []

    def line(self, raw: bytes) -> list[str]:
        self.lines.append(raw)
        return [f"seen {len(raw)}"] if raw.startswith(b"{") else []

    def wants(self, data: bytes) -> bool:
        return b"{" in data


class Exploding(EchoParser):
    def line(self, raw: bytes) -> list[str]:
        raise ValueError("bug")


def test_rendered_lines_follow_their_raw_line_and_partials_wait() -> None:
    sink, parser = Recorder(), EchoParser()
    router = StreamRouter(sink, parser)
    router.feed(b'banner\n{"a"')
    router.feed(b':1}\ntail')
    router.finish()
    assert sink.calls == [
        ("raw", (b"banner\n", True)),
        ("raw", (b'{"a"', False)),
        ("raw", (b":1}\n", False)),
        ("rendered", "seen 7"),
        ("raw", (b"tail", True)),
    ]
    assert parser.lines == [b"banner", b'{"a":1}', b"tail"]
    assert router.bytes == len(b'banner\n{"a":1}\ntail')


def test_consecutive_unrendered_lines_are_written_together() -> None:
    sink, parser = Recorder(), EchoParser()
    StreamRouter(sink, parser).feed(b"a\nb\nc\n")
    assert sink.calls == [("raw", (b"a\nb\nc\n", True))]
    assert parser.lines == []  # plain text the parser does not want is not even split


def test_plain_text_after_a_json_line_is_not_parsed_even_when_chunks_cut_lines() -> None:
    sink, parser = Recorder(), EchoParser()
    router = StreamRouter(sink, parser)
    router.feed(b'{"a":1}\nab')
    for _ in range(3):
        router.feed(b"c\nab")
    router.feed(b'c\n{"b":2}\n')
    router.finish()
    # the plain lines took the fast path; only the one the JSON chunk ends is parsed
    assert parser.lines == [b'{"a":1}', b"abc", b'{"b":2}']
    raw = b"".join(c[1][0] for c in sink.calls if c[0] == "raw")  # type: ignore[index,misc]
    assert raw == b'{"a":1}\nab' + b"c\nab" * 3 + b'c\n{"b":2}\n'


def test_a_raising_parser_leaves_the_raw_line() -> None:
    sink = Recorder()
    router = StreamRouter(sink, Exploding())
    router.feed(b'{"x":1}\nplain\n')
    assert sink.calls == [("raw", (b'{"x":1}\n', False)), ("raw", (b"plain\n", True))]


def test_multi_line_rendered_text_becomes_several_rendered_lines() -> None:
    class TwoLines(EchoParser):
        def line(self, raw: bytes) -> list[str]:
            return ["one\ntwo"]

        def wants(self, data: bytes) -> bool:
            return True

    sink = Recorder()
    StreamRouter(sink, TwoLines()).feed(b"x\n")
    assert sink.calls[1:] == [("rendered", "one"), ("rendered", "two")]


@given(st.lists(st.binary(max_size=40), max_size=20))
def test_the_log_holds_every_byte_in_order(chunks: list[bytes]) -> None:
    sink = Recorder()
    router = StreamRouter(sink, EchoParser())
    for chunk in chunks:
        router.feed(chunk)
    router.finish()
    raw = b"".join(data for kind, (data, _) in  # type: ignore[misc]
                   (c for c in sink.calls if c[0] == "raw"))
    assert raw == b"".join(chunks)


def test_with_a_real_transcript_the_log_strips_back_to_the_agent_bytes(tmp_path: Path) -> None:
    console = io.BytesIO()
    transcript = Transcript(tmp_path / "x.log", Console(console),
                            lambda: datetime.now().astimezone(), root=tmp_path)
    router = StreamRouter(transcript, EchoParser())
    agent = b'{"k": 1}\nplain \xff\xfe line\n{"partial'
    for i in range(0, len(agent), 5):
        router.feed(agent[i : i + 5])
    router.finish()
    transcript.close()
    log = (tmp_path / "x.log").read_bytes()
    assert log.startswith(b'{"k": 1}\n' + "» seen 8\n".encode())
    kept = b"".join(line for line in log.splitlines(keepends=True)
                    if not line.startswith("» ".encode()))
    assert kept == agent + b"\n"  # LOG-3: the newline aidd adds before the rendered line
    assert b'{"k"' not in console.getvalue()
    assert b"plain \xff\xfe line\n" in console.getvalue()


LINES = [b"plain text", b'{"json": 1}', b"Error: boom", b"", b"\xff\xfe", b'{"x": "y"}' * 3]


@given(st.lists(st.sampled_from(LINES), max_size=12), st.lists(st.integers(1, 30), max_size=8),
       st.booleans())
def test_chunking_never_changes_what_the_parser_sees(lines: list[bytes], cuts: list[int],
                                                     final_newline: bool) -> None:
    data = b"\n".join(lines) + (b"\n" if final_newline else b"")
    points = sorted({min(c * 3, len(data)) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    sink, parser = Recorder(), EchoParser()
    router = StreamRouter(sink, parser)
    for chunk in chunks:
        router.feed(chunk)
    router.finish()
    whole = data.split(b"\n")
    if whole and whole[-1] == b"":
        whole.pop()
    assert [x for x in parser.lines if x.startswith(b"{")] == [
        line for line in whole if line.startswith(b"{")]
    assert all(line in whole for line in parser.lines)  # only whole lines, never pieces
    raw = [c[1][0] for c in sink.calls if c[0] == "raw"]  # type: ignore[index]
    assert b"".join(raw) == data  # type: ignore[arg-type]
    rendered = [c[1] for c in sink.calls if c[0] == "rendered"]
    assert rendered == [f"seen {len(x)}" for x in parser.lines if x.startswith(b"{")]


class Measuring(EchoParser):
    """Records what `wants` is handed."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[bytes] = []

    def wants(self, data: bytes) -> bool:
        self.asked.append(data)
        return super().wants(data)


def test_a_plain_batch_is_checked_as_it_came_not_copied_behind_the_partial_line() -> None:
    """After a partial line, `wants` gets the batch itself and the two ends around the cut (a
    word split by it): never the partial line glued to a copy of the whole batch (issue 33)."""
    sink, parser = Recorder(), Measuring()
    router = StreamRouter(sink, parser)
    router.feed(b"a partial line without its end")
    batch = b"x" * 99 + b"\n" + b"y" * (256 << 10)
    router.feed(batch)
    assert any(data is batch for data in parser.asked)
    assert max(len(data) for data in parser.asked) == len(batch)


class WordParser(EchoParser):
    def wants(self, data: bytes) -> bool:
        return b"Error" in data


def test_a_word_the_parser_wants_split_between_two_batches_is_still_parsed() -> None:
    parser = WordParser()
    router = StreamRouter(Recorder(), parser)
    router.feed(b"z" * 1000 + b"\nEr")
    router.feed(b"ror: boom" + b"z" * 1000 + b"\nplain\n")
    router.finish()
    assert parser.lines[0] == b"Error: boom" + b"z" * 1000
