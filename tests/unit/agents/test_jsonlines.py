"""The agent's JSON lines: an object or nothing, whatever the agent prints."""

from __future__ import annotations

import pytest

from aidd.agents.jsonlines import decode_event


@pytest.mark.parametrize(("line", "decoded"), [
    (b'{"type": "result"}\n', {"type": "result"}),
    (b"banner text", None),
    (b'{"torn": ', None),
    (b'{"a": ' * 200_000 + b"1" + b"}" * 200_000, None),  # nested past the stack: no crash
    (b"[1, 2]", None),
])
def test_an_object_or_nothing(line: bytes, decoded: object) -> None:
    assert decode_event(line) == decoded
