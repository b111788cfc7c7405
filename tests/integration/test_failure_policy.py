"""Failed attempts: each counts toward `--max-iterations`, `--quit-on-abort` ends the run after
N in a row, exit 1 is a success for opencode and kilo, timeouts may be let pass, and a fatal
CLI error (no binary, no authentication) ends the run with 8 (SUP-61..63, AC-8, AC-34, AC-35,
AC-48..50)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeAgent
from tests.integration.runs import FAIL, LIMITS, OK, RunAidd, events, log, tree_snapshot


def test_failing_agent_counts_every_attempt(run_aidd: RunAidd, env: dict[str, str],
                                            fake_agent: FakeAgent, project: Path) -> None:
    """AC-49: --max-iterations 5 and an agent that always fails: exactly 5 attempts, exit 0."""
    fake_agent.script(FAIL)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "5", *LIMITS, env=env)
    assert res.code == 0, res.err
    assert len(fake_agent.records()) == 5


def test_quit_on_abort_exits_with_the_last_result(run_aidd: RunAidd, env: dict[str, str],
                                                  fake_agent: FakeAgent, project: Path) -> None:
    """AC-48."""
    fake_agent.script(FAIL)
    res = run_aidd("--project-dir", str(project), "--quit-on-abort", "2", *LIMITS, env=env)
    assert res.code == 3, res.err
    assert len(fake_agent.records()) == 2
    assert events(project)[-1]["reason"] == "quit_on_abort"


def test_quit_on_abort_counts_only_consecutive_failures(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-48: fail, succeed, fail, succeed with --quit-on-abort 2 does not quit."""
    fake_agent.script(FAIL, OK, FAIL, OK)
    res = run_aidd("--project-dir", str(project), "--quit-on-abort", "2", "--max-iterations", "4",
                   *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == 4
    assert events(project, "failure_threshold") == []
    assert events(project, "run_end")[-1]["failures"] == 2


@pytest.mark.parametrize(("cli", "quits"), [("opencode", False), ("kilocode", False),
                                            ("claude-code", True)])
def test_exit_1_and_the_failure_counter(run_aidd: RunAidd, env: dict[str, str],
                                        fake_agent: FakeAgent, project: Path, cli: str,
                                        quits: bool) -> None:
    """AC-35: opencode/kilo exit 1 is a success that resets the counter ("exit 1 treated as
    success"); claude exit 1 is a failure. fail, exit 1, fail under --quit-on-abort 2."""
    exit1: list[dict[str, Any]] = [{"init": True}, {"say": "nothing left"}, {"exit": 1}]
    fake_agent.script([{"init": True}, *FAIL], exit1, [{"init": True}, *FAIL], OK)
    res = run_aidd("--project-dir", str(project), "--cli", cli, "--quit-on-abort", "2",
                   "--max-iterations", "3", *LIMITS, env=env)
    ends = events(project, "iteration_end")
    if quits:
        assert res.code == 1, res.out + res.err
        assert [e["result"] for e in ends] == [3, 1]
    else:
        assert res.code == 0, res.out + res.err
        assert [(e["result"], e["reason"]) for e in ends] == [
            (3, "exit_status"), (0, "exit1_success"), (3, "exit_status")]
        assert "exit 1 treated as success" in log(project, 2)
        assert events(project, "failure_threshold") == []


@pytest.mark.parametrize("continue_on_timeout", [True, False])
def test_continue_on_timeout(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
    continue_on_timeout: bool
) -> None:
    """AC-50, SUP-63: timeouts (124) never reach --quit-on-abort under --continue-on-timeout."""
    fake_agent.script([{"say": "thinking"}, {"sleep": 60}])
    flags = ["--continue-on-timeout"] if continue_on_timeout else []
    res = run_aidd("--project-dir", str(project), "--quit-on-abort", "2", "--max-iterations", "3",
                   "--timeout", "1", "--idle-nudge-timeout", "0", "--idle-timeout", "0", *flags,
                   env=env)
    ends = events(project, "iteration_end")
    assert {e["result"] for e in ends} == {124}
    if continue_on_timeout:
        assert res.code == 0, res.out + res.err
        assert len(ends) == 3
        assert events(project, "failure_threshold") == []
    else:
        assert res.code == 124, res.out + res.err
        assert len(ends) == 2
        assert events(project, "run_end")[-1]["reason"] == "quit_on_abort"


def test_claude_401_ends_the_run_with_8(run_aidd: RunAidd, env: dict[str, str],
                                        fake_agent: FakeAgent, project: Path) -> None:
    """AC-34: after the attempt aidd exits 8; one stderr line names authentication."""
    fake_agent.script([{"init": True}, {"result": {
        "is_error": True, "api_error_status": 401,
        "result": "Invalid API key · Please run /login"}}, {"exit": 1}])
    res = run_aidd("--project-dir", str(project), "--cli", "claude-code", "--max-iterations", "5",
                   *LIMITS, env=env)
    assert res.code == 8, res.out + res.err
    assert len(fake_agent.records()) == 1
    lines = res.err.strip().splitlines()
    assert len(lines) == 1, res.err
    assert "authentication" in lines[0].lower()
    assert "Invalid API key" in lines[0]
    assert "Invalid API key" in log(project)
    end = events(project)[-1]
    assert (end["event"], end["exit_code"], end["reason"]) == ("run_end", 8, "fatal")


def test_missing_agent_binary_exits_8_and_writes_nothing(run_aidd: RunAidd,
                                                         aidd_env: dict[str, str],
                                                         tmp_path: Path) -> None:
    """AC-8."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "README.md").write_text("x")
    before = tree_snapshot(project)
    res = run_aidd("--project-dir", str(project), env={**aidd_env, "PATH": str(tmp_path)})
    assert res.code == 8
    assert "opencode" in res.err
    assert tree_snapshot(project) == before
