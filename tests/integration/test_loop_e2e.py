"""The real `aidd` loop end to end: stuck detection, `.stop` during sleeps and long attempts,
log cleaning on every exit path, and the loop rules not covered by test_run_loop.py."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeAgent
from tests.integration.conftest import RunAidd, complete_project, events

FAST = ("--idle-nudge-timeout", "5", "--idle-timeout", "10", "--timeout", "30")
OK: list[dict[str, Any]] = [{"say": "done"}, {"finish": True}]
FAIL: list[dict[str, Any]] = [{"say": "broken"}, {"exit": 3}]
STOP: list[dict[str, Any]] = [{"write_file": ".automaker/.stop", "text": "now"}]
RATE_LIMITED: list[dict[str, Any]] = [
    {"init": True}, {"error": {"name": "APIError", "message": "rate limit exceeded"}}]
STUCK_LINE = "stopped: 3 consecutive iterations without meaningful changes"
# Everything LOG-21 removes, plus lines it must keep (a repeated line stays twice).
NOISE = ("\x1b[1;31mred\x1b[0m text\n"
         "\x1b]0;window title\x07after the title\n"
         "┌──────────┐\n"
         "│ boxed    │\n"
         "└──────────┘\n"
         "\n\n\n\n"
         "same line\n"
         "same line\n"
         "NOISE-END\n")


def git_init(root: Path, env: dict[str, str]) -> None:
    for argv in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"]):
        subprocess.run(["git", *argv], cwd=root, env=env, check=True, capture_output=True)


def named(root: Path, name: str) -> list[dict[str, Any]]:
    return [e for e in events(root) if e["event"] == name]


def wait_for(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


def file_has(path: Path, text: str) -> Callable[[], bool]:
    return lambda: path.exists() and text in path.read_text(errors="replace")


@contextmanager
def started(env: dict[str, str], tmp_path: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """The real aidd in the background (for signals and `.stop` from outside)."""
    with (tmp_path / "out.txt").open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "aidd", *args], env=env, cwd=tmp_path,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


# -- stuck detection (SUP-70..72, AC-55, AC-56) --------------------------------------------------
@pytest.mark.parametrize("in_git", [True, False], ids=["git", "no-git"])
@pytest.mark.parametrize("touch", ["nothing", "automaker"])
def test_three_unchanged_iterations_end_an_unlimited_run(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
    in_git: bool, touch: str
) -> None:
    """AC-55: nothing, or only .automaker/, changes: stuck after attempt 3, exit 0."""
    if in_git:
        git_init(project, env)
    steps = OK if touch == "nothing" else [
        {"write_file": ".automaker/notes.md", "text": "a note"}, *OK]
    fake_agent.script(steps, steps, steps, STOP)  # STOP: a guard that ends a run gone wrong
    res = run_aidd("--project-dir", str(project), *FAST, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == 3
    assert STUCK_LINE in res.out
    assert STUCK_LINE in (project / ".automaker" / "iterations" / "003.log").read_text()
    assert [e["iterations"] for e in named(project, "stuck")] == [[1, 2, 3]]
    assert named(project, "phase_end")[-1]["reason"] == "stuck"
    assert named(project, "run_end")[-1]["exit_code"] == 0


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "no-git"])
def test_an_agent_editing_the_same_file_each_time_is_never_stuck(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path, in_git: bool
) -> None:
    """AC-56: further edits to an already-modified (tracked) file are progress."""
    if in_git:
        git_init(project, env)
    edits = [[{"write_file": "README.md", "text": "existing code\n" + "more\n" * i}, *OK]
             for i in range(1, 6)]
    fake_agent.script(*edits, STOP)
    res = run_aidd("--project-dir", str(project), *FAST, env=env)
    assert res.code == 6, res.out + res.err  # ended by the guard, never by stuck detection
    assert len(fake_agent.records()) == 6
    assert named(project, "stuck") == []


def test_outside_git_changes_then_nothing_ends_after_attempt_7(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-56: a file changed in the first four attempts, then nothing: the run ends after 7."""
    edits = [[{"write_file": "src/app.txt", "text": f"version {i}\n"}, *OK] for i in range(4)]
    fake_agent.script(*edits, OK, OK, OK, STOP)
    res = run_aidd("--project-dir", str(project), *FAST, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == 7
    assert [e["iterations"] for e in named(project, "stuck")] == [[5, 6, 7]]


def test_a_failed_attempt_without_changes_leaves_the_stuck_count(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """SUP-71: success, failure, success, success (no changes): stuck after attempt 4."""
    git_init(project, env)
    fake_agent.script(OK, FAIL, OK, OK, STOP)
    res = run_aidd("--project-dir", str(project), *FAST, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == 4
    assert [e["iterations"] for e in named(project, "stuck")] == [[1, 3, 4]]


def test_no_stuck_detection_with_max_iterations(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-55: with --max-iterations set, unchanged iterations never end the run."""
    git_init(project, env)
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "4", *FAST, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == 4
    assert named(project, "stuck") == []
    assert named(project, "phase_end")[-1]["reason"] == "max_iterations"
    assert "main: --max-iterations 4 reached" in res.out
    assert "run ended (done): exit 0 after 4 iterations, 0 failed" in res.out


# -- graceful stop (SUP-52, SUP-90, AC-47, AC-52) --------------------------------------------
@pytest.mark.parametrize("how", ["stop", "sigterm"])
def test_stop_or_signal_during_a_rate_limit_sleep(
    env: dict[str, str], fake_agent: FakeAgent, project: Path, tmp_path: Path, how: str
) -> None:
    """AC-47: a 300 s sleep ends within a second of `.stop` (6) or SIGTERM (124)."""
    fake_agent.script([{"print": NOISE}, *RATE_LIMITED])
    auto = project / ".automaker"
    with started(env, tmp_path, "--project-dir", str(project), "--rate-limit-fallback", "300",
                 *FAST) as proc:
        wait_for(file_has(auto / "events.jsonl", '"rate_limit_sleep"'))
        asked = time.monotonic()
        if how == "stop":
            (auto / ".stop").write_text("now\n")
        else:
            proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
        elapsed = time.monotonic() - asked
    assert code == (6 if how == "stop" else 124)
    assert elapsed < 5, elapsed  # the sleep had 300 s to go; 1 s plus start-up slack
    assert not (auto / ".stop").exists()
    assert len(fake_agent.records()) == 1
    end = named(project, "run_end")[-1]
    assert end["reason"] == ("stopped" if how == "stop" else "signal")
    assert end["rate_limit_sleeps"] == 1
    assert end["paused_s"] < 5
    log = (auto / "iterations" / "001.ratelimited.log").read_bytes()
    assert b"rate limited; sleeping until" in log
    assert b"\x1b" not in log  # LOG-20: rate-limited logs are cleaned too
    assert not (auto / "iterations" / "001.log").exists()


def test_stop_during_a_long_failing_attempt_waits_for_it(
    env: dict[str, str], fake_agent: FakeAgent, project: Path, tmp_path: Path
) -> None:
    """AC-52: `.stop` from outside is acknowledged during the attempt, which finishes (and
    fails); then aidd exits 6 and deletes the file."""
    fake_agent.script([{"say": "working"}, {"sleep": 2.5}, {"exit": 3}])
    auto = project / ".automaker"
    record = fake_agent.record_dir / "inv-000.json"
    with started(env, tmp_path, "--project-dir", str(project), *FAST) as proc:
        wait_for(record.exists)
        (auto / ".stop").write_text("now\n")
        code = proc.wait(timeout=30)
    assert code == 6
    assert not (auto / ".stop").exists()
    assert len(fake_agent.records()) == 1
    names = [e["event"] for e in events(project)]
    assert names.index("stop_requested") < names.index("iteration_end")  # noticed in the attempt
    assert names[-2:] == ["stop", "run_end"]
    end = named(project, "iteration_end")[0]
    assert (end["result"], end["outcome"]) == (3, "failure")
    assert end["duration_s"] >= 2.0  # not cut short
    log = (auto / "iterations" / "001.log").read_text()
    assert log.index("stop requested; finishing the current agent run") < log.index("finished:")
    assert "stop: .automaker/.stop honoured; exiting with 6" in log


# -- log cleaning (LOG-20..22, AC-82) --------------------------------------------------------
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
    res = run_aidd("--project-dir", str(project), *flags, *FAST, env=env)
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
    with started(env, tmp_path, "--project-dir", str(project), *FAST) as proc:
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
    assert named(project, "run_end")[-1]["reason"] == "signal"
    assert events(project)[-1]["event"] == "run_end"


def test_no_clean_keeps_raw_logs_and_later_runs_leave_them(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """LOG-20: `--no-clean` logs stay raw, even when a later run cleans its own."""
    fake_agent.script([{"print": NOISE}, *OK])
    args = ("--project-dir", str(project), "--max-iterations", "1", *FAST)
    res = run_aidd(*args, "--no-clean", env=env)
    assert res.code == 0, res.out + res.err
    iterations = project / ".automaker" / "iterations"
    raw = (iterations / "001.log").read_bytes()
    assert NOISE.encode() in raw
    res = run_aidd(*args, env=env)
    assert res.code == 0, res.out + res.err
    assert (iterations / "001.log").read_bytes() == raw
    assert_cleaned((iterations / "002.log").read_bytes())


# -- loop rules (SUP-50, SUP-60..63, CMP-30) ---------------------------------------------------
def test_rate_limited_attempts_do_not_count(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-45: --max-iterations 1: a 74 then a success make two attempts and exit 0."""
    fake_agent.script(RATE_LIMITED, OK)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1",
                   "--rate-limit-fallback", "1", *FAST, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == 2
    iterations = project / ".automaker" / "iterations"
    assert sorted(p.name for p in iterations.glob("*.log")) == ["001.ratelimited.log", "002.log"]
    assert "Iteration 1 of 1 (log 002)" in (iterations / "002.log").read_text()
    end = named(project, "run_end")[-1]
    assert (end["iterations"], end["attempts"], end["rate_limit_sleeps"]) == (1, 2, 1)
    assert [e["index"] for e in named(project, "iteration_start")] == [1, 1]


def test_quit_on_abort_counts_only_consecutive_failures(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-48: fail, succeed, fail, succeed with --quit-on-abort 2 does not quit."""
    fake_agent.script(FAIL, OK, FAIL, OK)
    res = run_aidd("--project-dir", str(project), "--quit-on-abort", "2", "--max-iterations", "4",
                   *FAST, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == 4
    assert named(project, "failure_threshold") == []
    assert named(project, "run_end")[-1]["failures"] == 2


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
    ends = named(project, "iteration_end")
    assert {e["result"] for e in ends} == {124}
    if continue_on_timeout:
        assert res.code == 0, res.out + res.err
        assert len(ends) == 3
        assert named(project, "failure_threshold") == []
    else:
        assert res.code == 124, res.out + res.err
        assert len(ends) == 2
        assert named(project, "run_end")[-1]["reason"] == "quit_on_abort"


def _feature(root: Path, fid: str, status: str, passes: bool) -> Path:
    path = root / ".automaker" / "features" / fid / "feature.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"id": fid, "category": "Core", "description": fid,
                                "status": status, "passes": passes}))
    return path


def test_todo_mode_stops_once_the_agent_clears_the_list(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """CMP-30: after the attempt that ticks the last item, the phase ends without an agent."""
    todo = project / ".automaker" / "todo.md"
    todo.parent.mkdir()
    todo.write_text("# TODO List\n- [ ] fix the thing\n- [x] old\n")
    fake_agent.script([{"write_file": ".automaker/todo.md", "text": "- [x] fix the thing\n"},
                       *OK])
    res = run_aidd("--project-dir", str(project), "--todo", *FAST, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == 1
    done = named(project, "mode_done")
    assert [(e["kind"], e["reason"]) for e in done] == [("todo", "no_actionable_todo")]
    assert named(project, "phase_end")[-1]["reason"] == "mode_done"
    assert sorted(p.name for p in (project / ".automaker" / "iterations").glob("*.log")) == [
        "001.log"]


@pytest.mark.parametrize("stop_when_done", [True, False])
def test_todo_mode_with_nothing_to_do(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
    stop_when_done: bool
) -> None:
    """AC-57, AC-58: no todo.md: exit 0, no agent, no log; --no-stop-when-done runs it."""
    fake_agent.script(OK)
    flag = [] if stop_when_done else ["--no-stop-when-done"]
    res = run_aidd("--project-dir", str(project), "--todo", "--max-iterations", "1", *flag,
                   *FAST, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == (0 if stop_when_done else 1)
    logs = list((project / ".automaker" / "iterations").glob("*.log"))
    assert len(logs) == (0 if stop_when_done else 1)


def test_in_progress_mode_stops_when_no_feature_is_in_progress(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """CMP-30: the agent finishes the only in-progress feature; the next iteration ends the
    phase (another failing feature keeps the project from completing)."""
    _feature(project, "feature-1-a", "in_progress", False)
    _feature(project, "feature-2-b", "backlog", False)
    done = json.dumps({"id": "feature-1-a", "category": "Core", "description": "feature-1-a",
                       "status": "completed", "passes": True})
    fake_agent.script([{"write_file": ".automaker/features/feature-1-a/feature.json",
                        "text": done}, *OK])
    res = run_aidd("--project-dir", str(project), "--in-progress", *FAST, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == 1
    assert "Prompt: in-progress" in (project / ".automaker" / "iterations" / "001.log").read_text()
    done_events = named(project, "mode_done")
    assert [(e["kind"], e["reason"]) for e in done_events] == [("in-progress", "no_in_progress")]
