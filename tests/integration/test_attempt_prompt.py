"""Prompt delivery, argv and environment, checked by what the fake CLI recorded
(ADP-10, ADP-11, ADP-20..23; AC-25, AC-26, AC-27, AC-30)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.fakes.attempt import run_fake_attempt

CLIS = ["opencode", "kilocode", "claude-code"]
CLAUDE_WORDS = ["--print", "--output-format", "stream-json", "--verbose",
                "--dangerously-skip-permissions", "--no-session-persistence",
                "--input-format", "stream-json"]


def big_prompt() -> str:
    """About 1 MiB: lines far over 4095 bytes, multibyte text, control characters a
    terminal would interpret, and a unique marker as the last line."""
    parts = []
    for k in range(40):
        parts.append(f"{k:03d} " + "αβγ→✓ données 日本語 " * 900)  # ~26 KiB per line
        parts.append("\x03\x04\x1b[2J\t{{ x }} $HOME `cmd`\r")
    text = "\n".join(parts) + "\nEND-OF-PROMPT-MARKER-7f3a"
    assert len(text.encode()) > 1 << 20
    return text


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("cli", CLIS)
@pytest.mark.parametrize("prompt", [big_prompt(), "x"], ids=["1MiB", "1byte"])
def test_prompt_arrives_byte_exact(fake_agent: FakeAgent, tmp_path: Path, cli: str,
                                   prompt: str) -> None:
    run = run_fake_attempt(tmp_path, cli, prompt=prompt)
    assert run.outcome.result == 0
    (record,) = fake_agent.records()
    assert record["stdin_sha256"] == sha(prompt)
    assert record["stdin_len"] == len(prompt.encode())


@pytest.mark.parametrize("cli", CLIS)
def test_a_prompt_the_agent_reads_late_never_blocks_its_output(
        fake_agent: FakeAgent, tmp_path: Path, cli: str) -> None:
    """The agent first writes 2 MiB without reading stdin: aidd must keep reading."""
    prompt = big_prompt()
    fake_agent.script({"stdin": "none", "steps": [
        {"flood": 2_000_000}, {"read_stdin": True} if cli != "claude-code" else
        {"echo_stdin": 1, "as": "raw"}, {"say": "ok"}, {"finish": True}]})
    run = run_fake_attempt(tmp_path, cli, prompt=prompt, timeout_s=30)
    assert run.outcome.result == 0
    (note,) = fake_agent.stdin_texts(0)
    if cli == "claude-code":
        assert note == prompt
    else:
        assert note == f"<EOF after {len(prompt.encode())} bytes sha256 {sha(prompt)}>"


@pytest.mark.parametrize(
    ("cli", "model", "argv"),
    [
        ("opencode", None, ["run", "--format", "json", "--auto"]),
        ("opencode", "openai/gpt-x", ["run", "--format", "json", "--auto", "--model",
                                        "openai/gpt-x"]),
        ("kilocode", None, ["run", "--format", "json", "--auto"]),
        ("kilocode", "m", ["run", "--format", "json", "--auto", "--model", "m"]),
        ("claude-code", None, CLAUDE_WORDS),
        ("claude-code", "opus", [*CLAUDE_WORDS, "--model", "opus"]),
    ],
)
def test_argv_is_exact(fake_agent: FakeAgent, tmp_path: Path, cli: str, model: str | None,
                       argv: list[str]) -> None:
    run = run_fake_attempt(tmp_path, cli, model=model)
    (record,) = fake_agent.records()
    assert record["argv"] == argv
    assert record["cwd"] == str(run.project)


@pytest.mark.parametrize("cli", CLIS)
def test_environment(fake_agent: FakeAgent, tmp_path: Path, cli: str,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("CLAUDE_CODE_ENTRYPOINT", "cli")
    monkeypatch.delenv("PAGER", raising=False)
    run = run_fake_attempt(tmp_path, cli, prompt_kind="onboarding", audit_name="SECURITY")
    env = fake_agent.records()[0]["env"]
    assert "CLAUDECODE" not in env
    assert "CLAUDE_CODE_ENTRYPOINT" not in env
    assert env["AIDD_PROJECT_DIR"] == str(run.project)
    assert env["AIDD_ITERATION"] == "1"
    assert env["AIDD_PROMPT_KIND"] == "onboarding"
    assert env["AIDD_CLI"] == cli
    assert env["AIDD_AUDIT_NAME"] == "SECURITY"
    assert env["PAGER"] == "cat"
