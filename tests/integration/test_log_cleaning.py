"""Iteration logs are cleaned of terminal noise on every way a run ends, unless `--no-clean`;
prompt files never are (LOG-20..22, AC-82)."""

from __future__ import annotations

import hashlib
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.integration.runs import (
    FAIL,
    LIMITS,
    NOISE,
    OK,
    STOP,
    RunAidd,
    complete_project,
    events,
    file_has,
    iterations,
    started,
)
from tests.waiting import wait_for


def assert_cleaned(log: bytes) -> None:
    assert b"\x1b" not in log
    assert b"\x07" not in log
    assert "┌".encode() not in log
    assert "└".encode() not in log
    assert "│ boxed    │\n".encode() in log
    assert b"red text\n" in log
    assert b"after the title\n" in log
    assert b"\n\n\n" not in log
    assert log.count(b"same line\n") == 2  # never a global dedup
    assert b"NOISE-END\n" in log


# exit path -> (extra flags, script, expected exit code, logs written)
CLEAN_PATHS: dict[str, tuple[tuple[str, ...], list[dict[str, Any]], int, int]] = {
    "max-iterations": (("--max-iterations", "2"), [{"print": NOISE}, *OK], 0, 2),
    "stuck": ((), [{"print": NOISE}, *OK], 0, 3),
    "stop": ((), [{"print": NOISE}, *STOP], 6, 1),
    "quit-on-abort": (("--quit-on-abort", "1"), [{"print": NOISE}, *FAIL], 3, 1),
    "completion": ((), [{"print": NOISE}, *OK], 73, 1),
}


@pytest.mark.parametrize("path", list(CLEAN_PATHS))
def test_logs_are_cleaned_on_every_exit_path(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path, path: str
) -> None:
    """AC-82: exits 0 (max iterations, stuck), 6, quit-on-abort and 73."""
    flags, steps, code, logs = CLEAN_PATHS[path]
    if path == "completion":
        complete_project(project)
    fake_agent.script(steps)
    res = run_aidd("--project-dir", str(project), *flags, *LIMITS, env=env)
    assert res.code == code, res.out + res.err
    found = sorted((project / ".automaker" / "iterations").glob("*.log"))
    assert len(found) == logs
    for log in found:
        assert_cleaned(log.read_bytes())
    prompt = (project / ".automaker" / "iterations" / "001.prompt.md").read_bytes()
    sent = fake_agent.records()[0]["stdin_sha256"]
    assert hashlib.sha256(prompt).hexdigest() == sent  # prompt files are never cleaned (LOG-20)


def test_logs_are_cleaned_after_sigterm(
    env: dict[str, str], fake_agent: FakeAgent, project: Path, tmp_path: Path
) -> None:
    """AC-54, AC-82: SIGTERM during an attempt: 124, tree killed, log cleaned."""
    fake_agent.script([{"print": NOISE}, {"sleep": 60}])
    log = project / ".automaker" / "iterations" / "001.log"
    with started(env, tmp_path, "--project-dir", str(project), *LIMITS) as proc:
        wait_for(file_has(log, "NOISE-END"))
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
    assert code == 124
    text = log.read_bytes()
    assert_cleaned(text)
    assert b"interrupted by SIGTERM" in text
    assert b"result 124" in text
    with pytest.raises(ProcessLookupError):
        os.kill(fake_agent.records()[0]["pid"], 0)
    assert events(project, "run_end")[-1]["reason"] == "signal"
    assert events(project)[-1]["event"] == "run_end"


def test_logs_are_cleaned_after_an_exit_1(run_aidd: RunAidd, env: dict[str, str],
                                          fake_agent: FakeAgent, project: Path) -> None:
    """AC-82 (exit 1), PRM-13: an override that fails to render only in the remediation phase
    ends the run with 1 naming file, line and variable; the audit attempt's log is cleaned."""
    fid = "audit-security-1767605415-bad-query"
    feature(project, fid, title="t", category="Security", priority=1,
            auditSeverity="critical", auditSource="SECURITY")
    override = project / ".automaker" / "prompts" / "coding.md"
    override.parent.mkdir(parents=True)
    override.write_text('{% include "builtin/coding.md" %}\n'
                        "{% if remediation %}{{ no_such_variable }}{% endif %}\n")
    fake_agent.script([{"print": "\x1b[1;31mred\x1b[0m text\n\n\n\n"}, *OK])
    res = run_aidd("--project-dir", str(project), "--audit", "SECURITY", "--code-after-audit",
                   "--max-iterations", "1", *LIMITS, env=env)
    assert res.code == 1, res.out + res.err
    assert "coding.md:2" in res.err
    assert "no_such_variable" in res.err
    assert len(res.err.strip().splitlines()) == 1, res.err  # one line, not a crash report
    assert "internal error" not in res.err
    assert "Traceback" not in res.out
    assert len(fake_agent.records()) == 1
    first = (iterations(project) / "001.log").read_bytes()
    assert b"red text\n" in first
    assert b"\x1b" not in first
    assert b"\n\n\n" not in first
    last = events(project)[-1]
    assert (last["event"], last["exit_code"], last["reason"]) == ("run_end", 1, "error")
    assert "no_such_variable" in (iterations(project) / "002.log").read_text()  # said in the log
    assert not (project / ".automaker" / "aidd.lock").exists()


def test_no_clean_keeps_raw_logs_and_later_runs_leave_them(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """LOG-20: `--no-clean` logs stay raw, even when a later run cleans its own."""
    fake_agent.script([{"print": NOISE}, *OK])
    args = ("--project-dir", str(project), "--max-iterations", "1", *LIMITS)
    res = run_aidd(*args, "--no-clean", env=env)
    assert res.code == 0, res.out + res.err
    folder = iterations(project)
    raw = (folder / "001.log").read_bytes()
    assert NOISE.encode() in raw
    res = run_aidd(*args, env=env)
    assert res.code == 0, res.out + res.err
    assert (folder / "001.log").read_bytes() == raw
    assert_cleaned((folder / "002.log").read_bytes())
