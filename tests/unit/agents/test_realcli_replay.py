"""Contract tests: transcripts recorded from the real CLIs (tests/fixtures/realcli/) replayed
through the adapters' parsers and the classifier (STYLE 6)."""

from __future__ import annotations

import json
import random
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest

from aidd.agents.base import ErrorKind, LineParser
from aidd.agents.registry import ADAPTERS
from aidd.agents.sessions import pick_session
from aidd.session.outcome import EndCause, classify
from aidd.session.stream import StreamRouter

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "realcli"
CLI_OF_DIR = {"claude": "claude-code", "opencode": "opencode", "kilo": "kilocode",
              "kilocode": "kilocode"}
# case name -> (error kind or None, exit-code result when the recording has one)
EXPECTED: dict[str, tuple[ErrorKind | None, int | None]] = {
    "hello": (None, 0),
    "hello_pipes": (None, 0),
    "shell": (None, 0),
    "big_prompt": (None, 0),
    "rate_limit": (None, 0),  # retried by the CLI itself, then recovered
    "rate_limit_persistent": (ErrorKind.RATE_LIMIT, 74),
    "rate_limit_no_retry": (ErrorKind.RATE_LIMIT, 74),  # claude, CLAUDE_CODE_MAX_RETRIES=0
    "auth_error": (ErrorKind.FATAL, 8),
    "overloaded": (ErrorKind.PROVIDER, 72),
    "server_error": (ErrorKind.PROVIDER, 72),
    "garbage": (ErrorKind.PROVIDER, 72),
    "stall.relaunch": (None, 0),
    # the mock answers with the provider's context-length error (issue 32)
    "context_overflow": (ErrorKind.CONTEXT, 76),
}


def recordings() -> list[tuple[str, Path]]:
    if not FIXTURES.is_dir():
        return []
    return [(CLI_OF_DIR[d.name], out) for d in sorted(FIXTURES.iterdir())
            if d.name in CLI_OF_DIR for out in sorted(d.glob("*.stdout"))]


def replay(cli: str, stdout: Path) -> tuple[LineParser, list[str], bytes]:
    """Both streams, cut into random chunks, through a router as the engine does it."""
    stderr = stdout.with_suffix(".stderr")
    data = stdout.read_bytes() + (stderr.read_bytes() if stderr.exists() else b"")
    parser = ADAPTERS[cli].new_parser(UTC)
    rendered: list[str] = []
    raw = bytearray()

    class Collect:
        def agent(self, chunk: bytes, *, echo: bool = True) -> None:
            raw.extend(chunk)

        def rendered(self, text: str) -> None:
            rendered.append(text)

    router = StreamRouter(Collect(), parser)
    rng = random.Random(stdout.name)
    pos = 0
    while pos < len(data):
        size = rng.randint(1, 4096)
        router.feed(data[pos : pos + size])
        pos += size
    router.finish()
    assert bytes(raw) == data
    return parser, rendered, data


def meta(stdout: Path) -> dict[str, Any]:
    path = stdout.parent / (stdout.name.split(".")[0] + ".json-meta")
    return json.loads(path.read_text()) if path.exists() else {}


@pytest.mark.skipif(not recordings(), reason="no recorded transcripts")
@pytest.mark.parametrize(("cli", "stdout"), recordings(),
                         ids=[f"{p.parent.name}/{p.stem}" for _, p in recordings()])
def test_recorded_transcript(cli: str, stdout: Path) -> None:
    parser, rendered, data = replay(cli, stdout)
    case = stdout.name.removesuffix(".stdout")
    signals = parser.signals
    assert all("\n" not in line for line in rendered)
    if data.strip().startswith(b"{"):
        assert signals.json_seen
        assert signals.conversation_id
    if case not in EXPECTED:
        return
    kind, result = EXPECTED[case]
    if b"auto-rejected permission" in data:  # kilo without --auto cannot run tools unattended
        kind, result = ErrorKind.FATAL, 8
    assert (signals.error.kind if signals.error else None) is kind
    if kind is None:
        assert signals.assistant_seen
        assert signals.turns_ended >= 1
        assert signals.tokens is not None
        assert signals.tokens.input > 0
        assert any(line.startswith("assistant: ") for line in rendered)
    status = meta(stdout).get("result", {}).get("exit_code")
    if result is not None and status is not None:
        verdict = classify(EndCause.EXITED, status, signals,
                           exit1_success=ADAPTERS[cli].exit1_success)
        assert verdict.result == result


@pytest.mark.parametrize("cli", ["claude-code", "opencode", "kilocode"])
def test_context_overflow_is_its_own_result_whichever_way_the_cli_ends(cli: str) -> None:
    """claude and kilo exit 1; opencode compacts and retries without end until aidd kills it
    as lingering after its failed turn: each is 76, never a provider error (issue 32)."""
    folder = {"claude-code": "claude", "opencode": "opencode", "kilocode": "kilo"}[cli]
    path = FIXTURES / folder / "context_overflow.stdout"
    if not path.exists():
        pytest.skip("not recorded")
    parser, rendered, _ = replay(cli, path)
    for cause, status in ((EndCause.EXITED, 1), (EndCause.LINGER, None)):
        verdict = classify(cause, status, parser.signals, exit1_success=True)
        assert (verdict.result, verdict.reason.value) == (76, "context_exhausted")
    assert any("too long" in line or "context length" in line for line in rendered)


def test_claude_persistent_limit_keeps_its_message() -> None:
    path = FIXTURES / "claude" / "rate_limit_persistent.stdout"
    if not path.exists():
        pytest.skip("not recorded")
    parser, rendered, _ = replay("claude-code", path)
    assert parser.signals.error is not None
    assert parser.signals.error.status in (None, 429)
    assert "rate limit" in parser.signals.rate_limit.message
    assert any(line.startswith("error: API Error") for line in rendered)


def test_opencode_persistent_limit_reads_retry_after() -> None:
    path = FIXTURES / "opencode" / "rate_limit_persistent.stdout"
    if not path.exists():
        pytest.skip("not recorded")
    parser, _, _ = replay("opencode", path)
    assert parser.signals.rate_limit.retry_after == "1"
    assert parser.signals.rate_limit.retry_after_ms == "1000"


def test_claude_interrupt_echo_is_not_progress() -> None:
    """After aidd's interrupt, claude prints a control_response, the interrupted-turn echo and
    result and a new init: none of it is the model's answer (the idle machine ignores it)."""
    path = FIXTURES / "claude" / "hang_interrupt.stdout"
    if not path.exists():
        pytest.skip("not recorded")
    lines = path.read_bytes().splitlines()
    parser = ADAPTERS["claude-code"].new_parser(UTC)
    parser.line(lines[0])  # the first init
    start = next(i for i, line in enumerate(lines) if b'"control_response"' in line)
    answer = next(i for i, line in enumerate(lines) if b'"type":"assistant"' in line)
    assert start < answer
    before = parser.signals.progress
    rendered = [text for line in lines[start:answer] for text in parser.line(line)]
    assert parser.signals.progress == before
    assert parser.signals.error is None  # the aborted turn is not the agent's error
    assert "turn interrupted (aborted_streaming)" in rendered
    parser.line(lines[answer])
    assert parser.signals.progress == before + 1


@pytest.mark.parametrize("cli", ["opencode", "kilo"])
def test_recorded_session_list_names_the_hung_session(cli: str) -> None:
    """`session list --format json`, recorded after a first-request hang (no sessionID printed),
    still has the fields aidd picks the session by."""
    listing = FIXTURES / cli / "hang.session-list.json"
    if not listing.exists():
        pytest.skip("not recorded")
    data = meta(FIXTURES / cli / "hang.stdout")
    (row,) = json.loads(listing.read_bytes())
    assert {"id", "created", "directory"} <= set(row)
    project = Path(row["directory"])
    since_s = row["created"] / 1000
    assert pick_session(listing.read_bytes(), project, since_s) == row["id"]
    assert data["result"]["session_id_from_list"] == row["id"]
    assert data["session_id"] is None  # nothing on stdout: why the listing is needed


@pytest.mark.parametrize("folder", ["claude", "opencode", "kilo"])
def test_recorded_tool_calls_and_text_are_counted(folder: str) -> None:
    """hello: one Write tool call, then "All done: hello.txt written."; big_prompt: a text
    answer alone, which aidd would call no work (issue 15)."""
    hello, big = FIXTURES / folder / "hello.stdout", FIXTURES / folder / "big_prompt.stdout"
    if not (hello.exists() and big.exists()):
        pytest.skip("not recorded")
    signals = replay(CLI_OF_DIR[folder], hello)[0].signals
    assert (signals.tool_calls, signals.assistant_chars) == (1, len(_texts(hello)))
    signals = replay(CLI_OF_DIR[folder], big)[0].signals
    assert (signals.tool_calls, signals.assistant_chars) == (0, len(_texts(big)))


def _texts(stdout: Path) -> str:
    """The assistant text of a recording, read apart from the parsers."""
    found = []
    for line in stdout.read_text().splitlines():
        event = json.loads(line)
        if event["type"] == "assistant":
            found += [b["text"] for b in event["message"]["content"] if b["type"] == "text"]
        elif event["type"] == "text":
            found.append(event["part"]["text"])
    return "".join(found)
