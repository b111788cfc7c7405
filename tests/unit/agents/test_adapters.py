"""The adapter interface: argv, environment, prompt and nudge encoding, versions (ADP-1..23)."""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import Path

import pytest

from aidd.agents.base import AgentContext, NudgeMethod
from aidd.agents.claude_code import ClaudeCode
from aidd.agents.registry import ADAPTERS
from aidd.agents.version import is_tested, untested_warning
from aidd.session.cliproc import probe_version
from tests.conftest import FakeAgent

CLAUDE_WORDS = ["--print", "--output-format", "stream-json", "--verbose",
                "--dangerously-skip-permissions", "--no-session-persistence",
                "--input-format", "stream-json"]


def test_registry_keys_are_the_cli_values() -> None:
    assert list(ADAPTERS) == ["opencode", "kilocode", "claude-code"]
    assert [a.name for a in ADAPTERS.values()] == list(ADAPTERS)
    assert [a.binary for a in ADAPTERS.values()] == ["opencode", "kilo", "claude"]


@pytest.mark.parametrize(
    ("cli", "model", "argv"),
    [
        ("opencode", None, ["/b/opencode", "run", "--format", "json", "--auto"]),
        ("opencode", "anthropic/sonnet",
         ["/b/opencode", "run", "--format", "json", "--auto", "--model", "anthropic/sonnet"]),
        ("kilocode", None, ["/b/kilo", "run", "--format", "json", "--auto"]),
        ("claude-code", None, ["/b/claude", *CLAUDE_WORDS]),
        ("claude-code", "opus", ["/b/claude", *CLAUDE_WORDS, "--model", "opus"]),
    ],
)
def test_fresh_argv(cli: str, model: str | None, argv: list[str]) -> None:
    adapter = ADAPTERS[cli]
    assert adapter.argv(f"/b/{adapter.binary}", model) == argv


@pytest.mark.parametrize("cli", ["opencode", "kilocode"])
def test_relaunch_argv(cli: str) -> None:
    adapter = ADAPTERS[cli]
    assert adapter.nudge_method is NudgeMethod.RELAUNCH
    assert adapter.relaunch_argv("k", "m/x", "ses_X") == [
        "k", "run", "--format", "json", "--session", "ses_X", "--auto", "--model", "m/x"]
    assert adapter.relaunch_argv("k", None, "ses_X")[-3:] == ["--session", "ses_X", "--auto"]


def test_claude_has_no_relaunch() -> None:
    assert ClaudeCode().nudge_method is NudgeMethod.STDIN
    with pytest.raises(NotImplementedError):
        ClaudeCode().relaunch_argv("claude", None, "x")


def test_exit_one_rules() -> None:
    assert ADAPTERS["opencode"].exit1_success
    assert ADAPTERS["kilocode"].exit1_success
    assert not ADAPTERS["claude-code"].exit1_success


@pytest.mark.parametrize("cli", list(ADAPTERS))
def test_environment(cli: str, tmp_path: Path) -> None:
    base = {"PATH": "/bin", "CLAUDECODE": "1", "CLAUDE_CODE_ENTRYPOINT": "cli",
            "TERM": "xterm", "AIDD_AUDIT_NAME": "stale", "ANTHROPIC_API_KEY": "k"}
    ctx = AgentContext(tmp_path, 7, "audit", "SECURITY", "1.2.3")
    env = ADAPTERS[cli].environment(base, ctx)
    assert "CLAUDECODE" not in env
    assert "CLAUDE_CODE_ENTRYPOINT" not in env
    assert env["AIDD_CLI"] == cli
    assert env["AIDD_ITERATION"] == "7"
    assert env["AIDD_PROJECT_DIR"] == str(tmp_path)
    assert env["AIDD_PROMPT_KIND"] == "audit"
    assert env["AIDD_AUDIT_NAME"] == "SECURITY"
    assert env["AIDD_VERSION"] == "1.2.3"
    assert (env["PAGER"], env["GIT_PAGER"], env["TERM"]) == ("cat", "cat", "xterm")
    assert env["ANTHROPIC_API_KEY"] == "k"  # passed through, never set by aidd
    assert base["CLAUDECODE"] == "1"  # the base mapping is not modified
    no_audit = ADAPTERS[cli].environment(base, AgentContext(tmp_path, 1))
    assert "AIDD_AUDIT_NAME" not in no_audit
    assert no_audit["TERM"] == "xterm"
    assert ADAPTERS[cli].environment({}, AgentContext(tmp_path, 1))["TERM"] == "dumb"


PROMPT = "Line one\n" + "é" * 5000 + "\n\x1b[31m {{ x }} $HOME `q`\n"


@pytest.mark.parametrize("cli", ["opencode", "kilocode"])
def test_opencode_prompt_is_the_raw_bytes(cli: str) -> None:
    adapter = ADAPTERS[cli]
    assert adapter.encode_prompt(PROMPT) == PROMPT.encode()
    assert adapter.encode_nudge("go on") == b"go on"


def test_claude_prompt_is_one_user_message_line() -> None:
    encoded = ClaudeCode().encode_prompt(PROMPT)
    assert encoded.endswith(b"\n")
    assert encoded.count(b"\n") == 1
    message = json.loads(encoded)
    assert message == {"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": PROMPT}]}}


def test_claude_nudge_interrupts_the_turn_then_sends_the_message() -> None:
    """A user line alone waits behind a hung request (docs/real-clis.md, hang_interrupt)."""
    first, second = ClaudeCode().encode_nudge("status?").splitlines()
    request = json.loads(first)
    assert request["type"] == "control_request"
    assert request["request"] == {"subtype": "interrupt"}
    assert request["request_id"].startswith("aidd-nudge-")
    assert json.loads(second)["message"]["content"][0]["text"] == "status?"
    again = json.loads(ClaudeCode().encode_nudge("x").splitlines()[0])
    assert again["request_id"] != request["request_id"]


def test_claude_needs_no_conversation_lookup(tmp_path: Path) -> None:
    assert ClaudeCode().conversations_argv("claude") is None
    assert ClaudeCode().pick_conversation(b"[]", tmp_path, 0.0) is None
    assert ClaudeCode().export_argv("claude", "x") is None
    assert ClaudeCode().holds_task(b"{}", "x") is None


def test_parsers_are_fresh_per_attempt() -> None:
    for adapter in ADAPTERS.values():
        assert adapter.new_parser(UTC) is not adapter.new_parser(UTC)


@pytest.mark.parametrize(
    ("cli", "version", "tested"),
    [
        ("claude-code", "2.1.197 (Claude Code)", True),
        ("claude-code", "2.2.0 (Claude Code)", False),
        ("opencode", "1.18.33", True),
        ("opencode", "v1.19.0", False),
        ("kilocode", "7.7.7", True),
        ("kilocode", "unknown", False),
    ],
)
def test_tested_versions(cli: str, version: str, tested: bool) -> None:
    adapter = ADAPTERS[cli]
    assert is_tested(adapter, version) is tested
    warning = untested_warning(adapter, version)
    assert (warning is None) is tested
    if warning:
        assert adapter.binary in warning
        assert version in warning


def test_version_probe(fake_agent: FakeAgent, monkeypatch: pytest.MonkeyPatch) -> None:
    assert probe_version(fake_agent.binary("claude")) == "2.1.197 (Claude Code)"
    monkeypatch.setenv("FAKE_AGENT_VERSION", "\n\n  9.9.9 beta  \nmore")
    assert probe_version(fake_agent.binary("kilo")) == "9.9.9 beta"
    assert fake_agent.records() == []  # --version is not an invocation
    assert probe_version("/nonexistent/opencode") == "unknown"


def test_version_probe_time_limit(tmp_path: Path) -> None:
    slow = tmp_path / "slow"
    slow.write_text("#!/bin/sh\nsleep 30\n")
    slow.chmod(0o755)
    assert probe_version(str(slow), timeout_s=0.3) == "unknown"
