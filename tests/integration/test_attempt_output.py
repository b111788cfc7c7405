"""The agent's terminal and its bytes: a real pty, a real fake CLI (SUP-10..15, LOG-3..5)."""

from __future__ import annotations

import json
import resource
from pathlib import Path

import pytest

from aidd.errors import AgentCliError
from aidd.run.signals import Interrupt
from tests.conftest import FakeAgent
from tests.fakes.attempt import run_fake_attempt

TEXT_EVENT = json.dumps({"type": "text", "sessionID": "ses_1", "part": {"text": "Hi"}})
STEP_FINISH = json.dumps({"type": "step_finish", "sessionID": "ses_1", "part": {
    "reason": "stop", "tokens": {"input": 3, "output": 4}, "cost": 0.5}})


def test_log_is_byte_complete(fake_agent: FakeAgent, tmp_path: Path) -> None:
    """JSON, plain text, invalid UTF-8, CRs and a final partial line all reach the log."""
    agent_bytes = (b"banner line\r\n" + TEXT_EVENT.encode() + b"\n" + b"bad \xff\xfe\x80 utf8\n"
                   + b"progress 10%\rprogress 100%\n" + STEP_FINISH.encode() + b"\n"
                   + b"last line without newline \xe2\x82")
    fake_agent.script([{"bytes": agent_bytes.hex()}])
    run = run_fake_attempt(tmp_path, "opencode")
    assert run.outcome.result == 0
    assert run.agent_log == agent_bytes
    assert run.outcome.bytes_out == len(agent_bytes)
    assert run.log.endswith(b"without newline \xe2\x82")
    assert "» assistant: Hi\n".encode() in run.log
    assert run.log.index(b'{"type": "text"') < run.log.index("» assistant: Hi".encode())
    assert run.outcome.tokens == {"input": 3, "output": 4, "reasoning": 0, "cache_read": 0,
                                  "cache_write": 0}
    assert run.outcome.cost_usd == 0.5


def test_console_shows_rendered_and_plain_lines_but_no_raw_json(
        fake_agent: FakeAgent, tmp_path: Path) -> None:
    fake_agent.script([{"line": "Plain banner"}, {"init": True}, {"say": "Working"},
                       {"finish": True}])
    run = run_fake_attempt(tmp_path, "kilocode")
    console = run.console.decode()
    assert "Plain banner\n" in console
    assert "» assistant: Working\n" in console
    assert '"type"' not in console
    assert '"type": "step_start"' in run.text


def test_the_agent_gets_a_terminal_of_its_own(fake_agent: FakeAgent, tmp_path: Path) -> None:
    run = run_fake_attempt(tmp_path, "claude-code")
    (record,) = fake_agent.records()
    assert record["stdout_tty"]
    assert not record["stdin_tty"]
    assert record["tty_size"] == [50, 200]
    assert record["opost"] is False
    assert record["controlling_tty"] is False  # see aidd/session/pty.py: no kernel SIGHUP
    assert record["pid"] == record["pgid"] == record["sid"]  # its own session and group
    assert record["cwd"] == str(run.project)


def test_large_output_arrives_whole(fake_agent: FakeAgent, tmp_path: Path) -> None:
    size = 8_000_000
    fake_agent.script([{"init": True}, {"flood": size, "width": 100}, {"say": "end"},
                       {"finish": True}])
    run = run_fake_attempt(tmp_path, "opencode")
    assert run.outcome.result == 0
    flood = run.agent_log.split(b"\n", 1)[1]  # after the step_start line
    assert flood.count(b"x" * 99 + b"\n") == size // 100
    assert run.elapsed_s < 15


def test_a_last_line_without_newline_is_kept_and_never_idle(
        fake_agent: FakeAgent, tmp_path: Path) -> None:
    """AC-41: an exiting agent is never reported idle; its last bytes are in the log."""
    fake_agent.script([{"init": True}, {"say": "done"}, {"print": "bye, no newline"}])
    run = run_fake_attempt(tmp_path, "claude-code", idle_nudge_s=1, idle_timeout_s=3)
    assert run.outcome.result == 0
    assert run.outcome.nudges == 0
    assert run.log.endswith(b"bye, no newline")
    assert run.elapsed_s < 1.5


def test_eof_while_the_agent_runs_is_not_its_end(fake_agent: FakeAgent, tmp_path: Path) -> None:
    """SUP-14: the end is the exit (waitpid), not the pty's EOF."""
    fake_agent.script([{"init": True}, {"say": "done"}, {"close_output": True},
                       {"sleep": 1.2}, {"exit": 3}])
    run = run_fake_attempt(tmp_path, "opencode", idle_timeout_s=5)
    assert run.outcome.exit_status == 3
    assert run.outcome.result == 3
    assert 1.1 < run.elapsed_s < 3


def test_exit_by_a_signal_not_sent_by_aidd(fake_agent: FakeAgent, tmp_path: Path) -> None:
    fake_agent.script([{"init": True}, {"say": "oops"}, {"die": "SEGV"}])
    run = run_fake_attempt(tmp_path, "claude-code")
    assert (run.outcome.exit_status, run.outcome.result) == (139, 139)


@pytest.mark.parametrize("cli", ["opencode", "claude-code"])
def test_a_silent_agent_costs_almost_no_cpu(
        fake_agent: FakeAgent, tmp_path: Path, cli: str) -> None:
    """SUP-15: no busy polling while the agent is silent."""
    fake_agent.script([{"init": True}, {"say": "thinking"}, {"sleep": 2}, {"finish": True}])
    before = resource.getrusage(resource.RUSAGE_SELF)
    run = run_fake_attempt(tmp_path, cli, idle_timeout_s=30, interrupt=Interrupt())
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert run.outcome.result == 0
    assert cpu < 0.05 * run.elapsed_s  # 10x the 0.5 % target (spawning included): no busy loop


def test_a_binary_that_cannot_start_is_a_cli_error(fake_agent: FakeAgent, tmp_path: Path) -> None:
    with pytest.raises(AgentCliError, match="cannot start /nonexistent/opencode"):
        run_fake_attempt(tmp_path, "opencode", binary="/nonexistent/opencode")
