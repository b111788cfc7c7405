"""The real `aidd` with each real CLI whose model answers with the provider's context-length
error (issue 32): result 76, and the next attempt is a new conversation whose prompt carries
aidd's hand-off (the file the first attempt wrote)."""

from __future__ import annotations

import pytest

from . import clis
from .aidd_run import run_aidd
from .conftest import StartMock, require_cli
from .scenario import GREETING, Reply, ReplyKind, Scenario

pytestmark = [pytest.mark.realcli, pytest.mark.timeout(240)]

MARK = "Create hello.txt with a greeting (context test)."
HAND_OFF = "ended with result 76: its conversation ran out of context or turns"


@pytest.mark.parametrize("cli", clis.CLIS)
def test_context_exhaustion_is_76_and_the_next_attempt_starts_fresh_with_the_hand_off(
    cli: str, start_mock: StartMock, sandbox: clis.Sandbox
) -> None:
    require_cli(cli)
    target = sandbox.project / "hello.txt"
    # The file is written, then every request is past the context window: claude exits at
    # once, kilo after three compactions, opencode compacts without end until aidd's linger
    # kill after its failed turn (docs/decisions.md).
    mock = start_mock(Scenario([Reply.write_file(str(target), GREETING),
                                Reply.of(ReplyKind.CONTEXT_OVERFLOW)]))
    run = run_aidd(cli, mock, sandbox, "--prompt", MARK, "--max-iterations", "2",
                   "--idle-nudge-timeout", "8", "--idle-timeout", "60", "--timeout", "90",
                   cap_s=220)
    assert run.code == 0, run.out[-3000:] + run.err
    assert [(e["result"], e["reason"]) for e in run.events("iteration_end")] == [
        (76, "context_exhausted")] * 2
    second = run.prompt(2)
    assert f"Attempt 001 {HAND_OFF}" in second, second[-3000:]
    assert "Files it changed: hello.txt." in second
    assert "Its conversation cannot be continued, so this is a new one" in second
    # The second attempt's requests hold its own prompt only: the exhausted conversation (with
    # the first prompt) was not resumed.
    later = [r for r in mock.primary_requests()
             if any(HAND_OFF in text for text in r.user_texts())]
    assert later
    for request in later:
        assert sum(MARK in text for text in request.user_texts()) == 1
