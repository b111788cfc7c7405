"""Each real CLI, driven directly with ADP-10's argv, writes a file through its own tool."""

from __future__ import annotations

import json

import pytest

from . import clis
from .conftest import StartMock, require_cli
from .flows import deliver, launch, run_to_end
from .observe import event_label, session_id
from .prompts import HELLO
from .recording import sha256_text
from .scenario import GREETING, Reply, Scenario

pytestmark = pytest.mark.realcli

# The event kinds a hello run must show; a CLI upgrade that renames them fails here first.
EXPECTED_EVENTS = {
    "claude": {"system/init", "assistant", "user", "result/success"},
    "opencode": {"step_start", "tool_use", "step_finish/tool-calls", "text", "step_finish/stop"},
    "kilo": {"step_start", "tool_use", "step_finish/tool-calls", "text", "step_finish/stop"},
}


@pytest.mark.parametrize("cli", clis.CLIS)
def test_hello_writes_a_file_through_the_cli_tool(
    cli: str, start_mock: StartMock, sandbox: clis.Sandbox
) -> None:
    require_cli(cli)
    target = sandbox.project / "hello.txt"
    mock = start_mock(
        Scenario([Reply.write_file(str(target), GREETING), Reply.final("All done.")])
    )
    proc = launch(cli, clis.fresh_argv(cli), mock, sandbox)
    try:
        deliver(proc, cli, HELLO)
        result = run_to_end(proc, cli, cap_s=90)
    finally:
        proc.close()
    stdout = proc.capture.bytes_of("stdout")
    kinds = {event_label(line) for line in stdout.splitlines()}
    primary = mock.primary_requests()
    assert result == {"exit_code": 0, "ended_by": "self"}, stdout[-2000:]
    assert target.read_text() == GREETING
    assert EXPECTED_EVENTS[cli] <= kinds, sorted(kinds)
    assert session_id(stdout)
    assert len(primary) == 2
    assert sha256_text(HELLO) in primary[0].user_text_sha256s()
    assert "hello from the mock" in json.dumps(primary[1].body)  # the tool result went back
