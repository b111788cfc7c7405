"""Acceptance items (spec/acceptance.md) that no other test proved through the real `aidd`
process: each test names its AC ids; the fake agent CLIs stand in for the real ones."""

from __future__ import annotations

import hashlib
import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

import aidd
from tests.conftest import FakeAgent
from tests.fakes.attempt import pid_alive
from tests.integration.conftest import REPO, RunAidd, events, tree_snapshot

SPEC = Path("/work/shared/spec")
FAST = ("--idle-nudge-timeout", "5", "--idle-timeout", "10", "--timeout", "30")
OK: list[dict[str, Any]] = [{"say": "done"}, {"finish": True}]
FAIL: list[dict[str, Any]] = [{"say": "broken"}, {"exit": 3}]


# -- fixtures and helpers ----------------------------------------------------------------------
def iterations(root: Path) -> Path:
    return root / ".automaker" / "iterations"


def log(root: Path, number: int = 1) -> str:
    return (iterations(root) / f"{number:03d}.log").read_text(errors="replace")


def prompt(root: Path, number: int = 1) -> str:
    return (iterations(root) / f"{number:03d}.prompt.md").read_text()


def feature(root: Path, fid: str, *, passes: bool = False, status: str = "backlog",
            directory: str | None = None, **extra: Any) -> Path:
    path = root / ".automaker" / "features" / (directory or fid) / "feature.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"id": fid, "category": "Core", "title": None, "description": fid,
                                "status": status, "passes": passes, **extra}))
    return path


def onboarded(root: Path) -> None:
    """app_spec.txt and CHANGELOG.md: with a feature.json, onboarding is complete (LAY-17)."""
    (root / ".automaker").mkdir(exist_ok=True)
    (root / ".automaker" / "app_spec.txt").write_text("spec\n")
    (root / ".automaker" / "CHANGELOG.md").write_text("# Changelog\n")


def utc(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def wait_for(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


def has_event(root: Path, name: str) -> Callable[[], bool]:
    path = root / ".automaker" / "events.jsonl"
    return lambda: path.exists() and f'"event": "{name}"' in path.read_text()


@contextmanager
def started(env: dict[str, str], tmp_path: Path, *args: str) -> Iterator[subprocess.Popen[str]]:
    """The real aidd in the background (for signals and `.stop` from outside)."""
    proc = subprocess.Popen([sys.executable, "-m", "aidd", *args], env=env, cwd=tmp_path,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


# == Arguments, configuration, setup ===========================================================
def _cli_md_flags() -> list[tuple[str, str]]:
    """(flag, default) of every row of the flag tables in cli.md that has a default column."""
    rows: list[tuple[str, str]] = []
    for table in (SPEC / "cli.md").read_text().split("\n\n"):
        lines = [ln for ln in table.splitlines() if ln.startswith("| `--")]
        header = table.splitlines()[0] if table.startswith("|") else ""
        if "Default" not in header:
            continue
        column = [c.strip() for c in header.strip("|").split("|")].index("Default")
        for line in lines:
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows.append((cells[0].split("`")[1].split(" ")[0], cells[column]))
    return rows


# How cli.md's default column reads in the help text (a switch's "–" is "off").
HELP_DEFAULT = {"–": ("default: none", "default: off"), "CLI default": ("the CLI's own",),
                "`--model`": ("(default: --model)",), "code model": ("the code model",),
                "0 = never": ("default: 0;",)}


def test_version_and_help_name_every_flag_with_its_default(run_aidd: RunAidd) -> None:
    """AC-3: `aidd <version>` exit 0; --help names every flag of cli.md with its default."""
    res = run_aidd("--version")
    assert (res.code, res.out.strip()) == (0, f"aidd {aidd.__version__}")
    res = run_aidd("--help")
    assert res.code == 0
    text = " ".join(res.out.split())
    rows = _cli_md_flags()
    assert len(rows) >= 30, rows
    for flag, default in rows:
        match = re.search(rf"(?<![\w-]){re.escape(flag)}[ /=].*?env AIDD_\w+\]", text)
        assert match, flag
        wants = HELP_DEFAULT.get(default, (f"default: {default.strip('`')};",))
        assert any(want in match.group(0) for want in wants), (flag, default, match.group(0))
        assert f"env AIDD_{flag[2:].upper().replace('-', '_')}" in match.group(0), flag


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--max-iterations", "abc"], "--max-iterations"),
        (["--max-iterations", "-1"], "--max-iterations"),
        (["--timeout", "-5"], "--timeout"),
        (["--idle-timeout", "1.5"], "--idle-timeout"),
        (["--quit-on-abort", "x"], "--quit-on-abort"),
        (["--model", "a b"], "--model"),
        (["--spec", "--todo"], "--spec"),
        (["--cli"], "--cli"),
        (["--filter-by", "nosuchfield", "--filter", "x"], "--filter-by"),
        (["--filter-by", "priority", "--filter", "high"], "--filter"),
    ],
)
def test_bad_values_exit_2_without_starting_the_agent(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
    args: list[str], flag: str
) -> None:
    """AC-4, AC-5: the agent is on PATH, yet never started; the project is untouched."""
    before = tree_snapshot(project)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *args, env=env)
    assert res.code == 2, res.err
    assert flag in res.err
    assert fake_agent.records() == []
    assert tree_snapshot(project) == before


def test_only_ignored_entries_mean_a_new_project(run_aidd: RunAidd, env: dict[str, str],
                                                fake_agent: FakeAgent, tmp_path: Path) -> None:
    """AC-9: all six ignored top-level names, and no --spec: exit 2, nothing created."""
    root = tmp_path / "proj"
    for name in (".git", ".automaker", "node_modules", ".vscode", ".idea"):
        (root / name).mkdir(parents=True)
    (root / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    before = tree_snapshot(root)
    res = run_aidd("--project-dir", str(root), env=env)
    assert res.code == 2, res.err
    assert "--spec" in res.err
    assert tree_snapshot(root) == before
    assert fake_agent.records() == []


@pytest.mark.parametrize("layout", ["audit-on-missing-dir", "app-spec-only", "hidden-file"])
def test_runs_that_need_no_spec(run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent,
                                tmp_path: Path, layout: str) -> None:
    """AC-11: an audit anywhere, a new project already holding app_spec.txt, and a directory
    whose only other entry is a dotfile all run without --spec."""
    root = tmp_path / "proj"
    args: tuple[str, ...] = ()
    kind = "onboarding"
    if layout == "audit-on-missing-dir":
        args, kind = ("--audit", "SECURITY"), "audit"
    elif layout == "app-spec-only":
        (root / ".automaker").mkdir(parents=True)
        (root / ".automaker" / "app_spec.txt").write_text("spec\n")
        kind = "initializer"
    else:
        root.mkdir()
        (root / ".env.example").write_text("A=1\n")
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(root), "--max-iterations", "1", *args, *FAST, env=env)
    assert res.code == 0, res.err
    assert len(fake_agent.records()) == 1
    assert f"Prompt: {kind}" in log(root)


# == New projects and detection ================================================================
def test_new_project_keeps_existing_files_and_stays_new(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path
) -> None:
    """AC-15, AC-16, AC-17, AC-28: scaffolding dotfiles appear but never overwrite; artifacts
    already in .automaker/ are kept; a second run without --spec is still an initializer run
    although scaffolding and opencode.json exist; the shipped todo.md lets --todo stop."""
    root = tmp_path / "proj"
    auto = root / ".automaker"
    auto.mkdir(parents=True)  # ignored by detection (LAY-15): still a new project
    (auto / "CHANGELOG.md").write_text("# my changelog\n")
    spec = tmp_path / "spec.md"
    spec.write_text("# Shop\n")
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(root), "--spec", str(spec), "--max-iterations", "1",
                   *FAST, env=env)
    assert res.code == 0, res.err
    assert (auto / "CHANGELOG.md").read_text() == "# my changelog\n"
    shipped = {p.name for p in (REPO / "scaffolding").iterdir()}
    assert {".gitignore", ".editorconfig"} <= shipped
    assert shipped <= {p.name for p in root.iterdir()}
    for name in shipped:
        assert (root / name).read_bytes() == (REPO / "scaffolding" / name).read_bytes()
    (root / ".gitignore").write_text("mine\n")  # the user's edit of a scaffolded file
    assert json.loads((root / "opencode.json").read_text())["permission"] == {"*": "allow"}
    assert (auto / "todo.md").read_bytes() == (REPO / "artifacts" / "todo.md").read_bytes()
    # a second run, without --spec: the recorded origin keeps it new
    res = run_aidd("--project-dir", str(root), "--max-iterations", "1", *FAST, env=env)
    assert res.code == 0, res.err
    assert "Prompt: initializer" in log(root, 2)
    assert (root / ".gitignore").read_text() == "mine\n"
    # the shipped todo.md has nothing to do: --todo ends without an agent
    res = run_aidd("--project-dir", str(root), "--todo", *FAST, env=env)
    assert res.code == 0, res.err
    assert len(fake_agent.records()) == 2
    assert [e["reason"] for e in events(root, "mode_done")] == ["no_actionable_todo"]


def test_shipped_todo_does_not_block_completion(run_aidd: RunAidd, env: dict[str, str],
                                                fake_agent: FakeAgent, project: Path) -> None:
    """AC-17, AC-59: with the shipped todo.md in place, a passing project completes (73) and
    `.project_completed` holds an ISO-8601 time."""
    onboarded(project)
    feature(project, "feature-1-a", passes=True, status="completed")
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *FAST, env=env)
    assert (project / ".automaker" / "todo.md").read_bytes() == (
        REPO / "artifacts" / "todo.md").read_bytes()
    assert res.code == 0, res.err  # the review ran; --max-iterations 1 ended the phase
    assert (project / ".automaker" / ".project_completion_pending").is_file()
    res = run_aidd("--project-dir", str(project), *FAST, env=env)
    assert res.code == 73, res.err
    stamp = (project / ".automaker" / ".project_completed").read_text().strip()
    assert datetime.fromisoformat(stamp).tzinfo is not None
    assert len(fake_agent.records()) == 1


# == Prompt cascade and assembly ===============================================================
@pytest.mark.parametrize("missing", [None, "feature", "app_spec.txt", "CHANGELOG.md"])
def test_coding_needs_all_three_onboarding_files(run_aidd: RunAidd, env: dict[str, str],
                                                 fake_agent: FakeAgent, project: Path,
                                                 missing: str | None) -> None:
    """AC-18: features/x/feature.json, app_spec.txt and CHANGELOG.md → coding; else onboarding."""
    onboarded(project)
    path = feature(project, "feature-1-a", directory="x")
    if missing == "feature":
        path.unlink()
    elif missing is not None:
        (project / ".automaker" / missing).unlink()
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *FAST, env=env)
    assert res.code == 0, res.err
    kind = "coding" if missing is None else "onboarding"
    assert f"Prompt: {kind}" in log(project)
    assert fake_agent.records()[0]["env"]["AIDD_PROMPT_KIND"] == kind


def test_prompt_text_beats_every_mode_and_arrives_verbatim(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-19: --prompt beats --audit, --todo, --validate, --in-progress; TEXT arrives as is;
    no directive.md is written."""
    text = "Add {{ x }} and {% raw %} to $HOME/`whoami` — 'quoted' \"too\""
    feature(project, "feature-1-a", status="in_progress")
    (project / ".automaker" / "todo.md").write_text("- [ ] a thing\n")
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(project), "--prompt", text, "--audit", "SECURITY",
                   "--todo", "--validate", "--in-progress", "--max-iterations", "1", *FAST,
                   env=env)
    assert res.code == 0, res.err
    (record,) = fake_agent.records()
    assert record["env"]["AIDD_PROMPT_KIND"] == "directive"
    sent = prompt(project)
    assert text in sent
    assert record["stdin_sha256"] == hashlib.sha256(sent.encode()).hexdigest()
    assert not list(project.rglob("directive.md"))


@pytest.mark.parametrize("cli", ["opencode", "claude-code"])
def test_prompt_file_holds_hard_constraints_and_cli_partial(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path, cli: str
) -> None:
    """AC-23: NNN.prompt.md is what the fake received and inlines _common/hard-constraints.md
    and _cli/<cli>.md (their static lines); no .automaker/_common/ appears."""
    fake_agent.script([{"init": True}, *OK])
    res = run_aidd("--project-dir", str(project), "--cli", cli, "--max-iterations", "1", *FAST,
                   env=env)
    assert res.code == 0, res.err
    sent = prompt(project)
    assert fake_agent.records()[0]["stdin_sha256"] == hashlib.sha256(sent.encode()).hexdigest()
    for part in ("_common/hard-constraints.md", f"_cli/{cli}.md"):
        static = [ln for ln in (REPO / "prompts" / part).read_text().splitlines()
                  if len(ln) > 30 and "{" not in ln]
        assert static, part
        assert all(ln in sent for ln in static), part
    assert not (project / ".automaker" / "_common").exists()


def test_prompt_overrides(run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent,
                          project: Path) -> None:
    """AC-24: an override including builtin/coding.md plus a line yields both; one using an
    undefined variable exits 1 naming file and variable before any agent starts."""
    onboarded(project)
    feature(project, "feature-1-a")
    fake_agent.script(OK)
    args = ("--project-dir", str(project), "--max-iterations", "1", *FAST)
    res = run_aidd(*args, env=env)
    assert res.code == 0, res.err
    plain = prompt(project, 1)
    builtin = [ln for ln in (REPO / "prompts" / "coding.md").read_text().splitlines()
               if len(ln) > 30 and "{" not in ln and ln in plain]
    assert len(builtin) > 5
    override = project / ".automaker" / "prompts" / "coding.md"
    override.parent.mkdir(parents=True)
    override.write_text('{% include "builtin/coding.md" %}\nOUR HOUSE RULE: tabs.\n')
    res = run_aidd(*args, env=env)
    assert res.code == 0, res.err
    sent = prompt(project, 2)
    assert "OUR HOUSE RULE: tabs." in sent
    assert "OUR HOUSE RULE" not in plain
    assert all(ln in sent for ln in builtin)
    override.write_text("Work on {{ no_such_variable }}.\n")
    res = run_aidd(*args, env=env)
    assert res.code == 1, res.err
    assert "coding.md" in res.err
    assert "no_such_variable" in res.err
    assert len(fake_agent.records()) == 2
    assert not (iterations(project) / "003.log").exists()


# == Adapters and classification ===============================================================
def test_claude_trailer_has_the_result_tokens_and_cost(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-29: the trailer (console and log) carries the result event's usage and cost."""
    fake_agent.script([{"init": True}, {"say": "hi"}, {"result": {
        "total_cost_usd": 0.1234,
        "usage": {"input_tokens": 4321, "output_tokens": 765}}}])
    res = run_aidd("--project-dir", str(project), "--cli", "claude-code", "--max-iterations", "1",
                   *FAST, env=env)
    assert res.code == 0, res.err
    for text in (res.out, log(project)):
        trailer = text[text.index("finished: result 0"):text.index("--- end of iteration 1")]
        assert "4321" in trailer
        assert "765" in trailer
        assert "$0.1234" in trailer
    (end,) = events(project, "iteration_end")
    assert end["cost_usd"] == 0.1234
    assert (end["tokens"]["input"], end["tokens"]["output"]) == (4321, 765)


CLAUDE_LIMIT_EVENT = "event"
CLAUDE_LIMIT_TEXT = "text"


@pytest.mark.parametrize("source", [CLAUDE_LIMIT_EVENT, CLAUDE_LIMIT_TEXT])
def test_claude_rate_limit_sleep_until(env: dict[str, str], fake_agent: FakeAgent,
                                       project: Path, tmp_path: Path, source: str) -> None:
    """AC-31, AC-47: `rate_limit_sleep.until` is resetsAt + buffer, or the next 02:00 in
    Berlin + 60 s for the message form; a `.stop` then ends the long sleep with 6."""
    resets_at = int(time.time()) + 120
    limit: list[dict[str, Any]] = [{"init": True}]
    if source == CLAUDE_LIMIT_EVENT:
        limit.append({"json": {"type": "rate_limit_event", "rate_limit_info": {
            "status": "rejected", "resetsAt": resets_at, "rateLimitType": "five_hour"}}})
    limit += [{"result": {"is_error": True, "api_error_status": 429,
                          "result": "You've hit your limit · resets 2am (Europe/Berlin)"}},
              {"exit": 1}]
    fake_agent.script(limit)
    with started(env, tmp_path, "--project-dir", str(project), "--cli", "claude-code",
                 "--rate-limit-buffer", "60", *FAST) as proc:
        wait_for(has_event(project, "rate_limit_sleep"))
        asked = time.monotonic()
        (project / ".automaker" / ".stop").write_text("now\n")
        assert proc.wait(timeout=30) == 6
        assert time.monotonic() - asked < 4  # 1 s, plus slack for a loaded machine
    (sleep,) = events(project, "rate_limit_sleep")
    until = utc(sleep["until"])
    if source == CLAUDE_LIMIT_EVENT:
        assert until.timestamp() == resets_at + 60
        assert sleep["source"] == "rate_limit_event"
    else:
        reset = until - timedelta(seconds=60)
        berlin = reset.astimezone(ZoneInfo("Europe/Berlin"))
        assert (berlin.hour, berlin.minute, berlin.second) == (2, 0, 0)
        assert timedelta(0) < reset - datetime.now(berlin.tzinfo) <= timedelta(days=1)
        assert sleep["source"] == "message"
    (end,) = events(project, "iteration_end")
    assert (end["result"], end["outcome"]) == (74, "rate_limited")


def test_claude_401_ends_the_run_with_8(run_aidd: RunAidd, env: dict[str, str],
                                        fake_agent: FakeAgent, project: Path) -> None:
    """AC-34: after the attempt aidd exits 8; one stderr line names authentication."""
    fake_agent.script([{"init": True}, {"result": {
        "is_error": True, "api_error_status": 401,
        "result": "Invalid API key · Please run /login"}}, {"exit": 1}])
    res = run_aidd("--project-dir", str(project), "--cli", "claude-code", "--max-iterations", "5",
                   *FAST, env=env)
    assert res.code == 8, res.out + res.err
    assert len(fake_agent.records()) == 1
    lines = res.err.strip().splitlines()
    assert len(lines) == 1, res.err
    assert "authentication" in lines[0].lower()
    assert "Invalid API key" in lines[0]
    assert "Invalid API key" in log(project)
    end = events(project)[-1]
    assert (end["event"], end["exit_code"], end["reason"]) == ("run_end", 8, "fatal")


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
                   "--max-iterations", "3", *FAST, env=env)
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


# == Rate limits and failure policy ============================================================
def test_fallback_retry_comes_after_about_a_second(run_aidd: RunAidd, env: dict[str, str],
                                                   fake_agent: FakeAgent, project: Path) -> None:
    """AC-46: an unparsable limit message under --rate-limit-fallback 1 is retried ~1 s later."""
    fake_agent.script([{"init": True}, {"error": {"name": "APIError",
                                                  "message": "rate limit exceeded"}}], OK)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1",
                   "--rate-limit-fallback", "1", *FAST, env=env)
    assert res.code == 0, res.out + res.err
    (sleep,) = events(project, "rate_limit_sleep")
    assert sleep["source"] == "fallback"
    assert 0.5 <= sleep["seconds"] <= 1.0
    first, second = fake_agent.records()
    assert 0.9 <= second["started"] - first["started"] <= 4.0


# == Stop, lock, signals =======================================================================
def test_stop_is_noticed_within_a_second(env: dict[str, str], fake_agent: FakeAgent,
                                         project: Path, tmp_path: Path) -> None:
    """AC-52: a `.stop` written during an attempt is logged and emitted within 1 s."""
    fake_agent.script([{"say": "working"}, {"sleep": 4}, *OK])
    with started(env, tmp_path, "--project-dir", str(project), *FAST) as proc:
        wait_for((fake_agent.record_dir / "inv-000.json").exists)
        (project / ".automaker" / ".stop").write_text("now\n")
        written = time.time()
        wait_for(has_event(project, "stop_requested"), timeout=10)
        seen = time.time()
        assert "stop requested; finishing the current agent run" in log(project)
        assert proc.wait(timeout=30) == 6
    (requested,) = events(project, "stop_requested")
    assert utc(requested["ts"]).timestamp() - written < 1.5
    assert seen - written < 3  # polling slack of the test itself on a loaded machine
    (end,) = events(project, "iteration_end")
    assert end["duration_s"] >= 3.5  # the attempt was allowed to finish


def test_sighup_ends_the_run_like_sigterm(env: dict[str, str], fake_agent: FakeAgent,
                                          project: Path, tmp_path: Path) -> None:
    """AC-54: SIGHUP during an attempt: 124, tree dead, lock gone, run_end (signal) last."""
    fake_agent.script([{"say": "working"}, {"spawn": ["sleep", "1000"], "pid_file": "child"},
                       {"mark": "ready"}, {"sleep": 60}])
    with started(env, tmp_path, "--project-dir", str(project), *FAST) as proc:
        wait_for((fake_agent.record_dir / "ready").exists)
        sent = time.monotonic()
        proc.send_signal(signal.SIGHUP)
        assert proc.wait(timeout=30) == 124
        assert time.monotonic() - sent < 5 + 3  # the kill grace, plus slack
    child = fake_agent.pid("child")
    assert child is not None
    assert not pid_alive(child)
    assert not pid_alive(fake_agent.records()[0]["pid"])
    assert not (project / ".automaker" / "aidd.lock").exists()
    last = events(project)[-1]
    assert (last["event"], last["reason"], last["exit_code"]) == ("run_end", "signal", 124)
    assert [e["name"] for e in events(project, "signal")] == ["SIGHUP"]
    assert "interrupted by SIGHUP" in log(project)


def test_second_sigint_skips_the_grace(env: dict[str, str], fake_agent: FakeAgent,
                                       project: Path, tmp_path: Path) -> None:
    """AC-54: an agent ignoring SIGTERM dies at a second SIGINT without the 5 s grace."""
    fake_agent.script([{"say": "working"}, {"ignore": ["TERM"]}, {"mark": "ready"},
                       {"sleep": 60}])
    with started(env, tmp_path, "--project-dir", str(project), *FAST) as proc:
        wait_for((fake_agent.record_dir / "ready").exists)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        wait_for(has_event(project, "signal"), timeout=10)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 124
        elapsed = time.monotonic() - sent
    assert elapsed < 4.5, elapsed  # the grace alone is 5 s
    assert not pid_alive(fake_agent.records()[0]["pid"])
    assert events(project)[-1]["event"] == "run_end"


# == Modes and completion ======================================================================
def test_todo_with_only_closed_items_starts_nothing(run_aidd: RunAidd, env: dict[str, str],
                                                    fake_agent: FakeAgent, project: Path) -> None:
    """AC-57: only [x], [~] and [!] items: exit 0, no agent, no log."""
    todo = project / ".automaker" / "todo.md"
    todo.parent.mkdir()
    todo.write_text("# TODO\n- [x] done\n- [~] deferred\n- [!] blocked\n")
    res = run_aidd("--project-dir", str(project), "--todo", *FAST, env=env)
    assert res.code == 0, res.out + res.err
    assert fake_agent.records() == []
    assert not list(iterations(project).glob("*.log"))
    assert [e["reason"] for e in events(project, "mode_done")] == ["no_actionable_todo"]


@pytest.mark.parametrize(("flags", "attempts"), [
    (("--in-progress", "--filter-by", "category", "--filter", "Other"), 0),
    (("--in-progress", "--filter-by", "category", "--filter", "Other", "--no-stop-when-done",
      "--max-iterations", "1"), 1),
    (("--validate", "--max-iterations", "2"), 2),
    (("--max-iterations", "2"), 2),
])
def test_in_progress_validate_and_coding_counts(run_aidd: RunAidd, env: dict[str, str],
                                                fake_agent: FakeAgent, project: Path,
                                                flags: tuple[str, ...], attempts: int) -> None:
    """AC-58: no in_progress feature after the filter: exit 0 without the agent, unless
    --no-stop-when-done; --validate and coding run both attempts of --max-iterations 2."""
    onboarded(project)
    feature(project, "feature-1-a", status="in_progress")  # category Core: filtered out
    feature(project, "feature-2-b", category="Other")
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(project), *flags, *FAST, env=env)
    assert res.code == 0, res.out + res.err
    assert len(fake_agent.records()) == attempts
    assert len(list(iterations(project).glob("*.log"))) == attempts
    if attempts == 0:
        assert [e["reason"] for e in events(project, "mode_done")] == ["no_in_progress"]


# == Features, status ==========================================================================
def test_check_features_through_the_cli(run_aidd: RunAidd, aidd_env: dict[str, str],
                                        tmp_path: Path) -> None:
    """AC-63, AC-65: valid → message, 0; invalid → directory and field, 7; no features/ → 3;
    empty → `No feature files found.`, 0; a path with spaces works. No agent is needed."""
    root = tmp_path / "proj"
    root.mkdir()
    quiet = {**aidd_env, "PATH": "/nonexistent"}
    res = run_aidd("--project-dir", str(root), "--check-features", env=quiet)
    assert res.code == 3, res.err
    (root / ".automaker" / "features").mkdir(parents=True)
    res = run_aidd("--project-dir", str(root), "--check-features", env=quiet)
    assert (res.code, "No feature files found." in res.out) == (0, True), res.out + res.err
    feature(root, "feature-1-a", directory="with space")
    res = run_aidd("--project-dir", str(root), "--check-features", env=quiet)
    assert res.code == 0, res.out + res.err
    assert "All feature.json files are valid." in res.out
    bad = feature(root, "feature-2-b", directory="broken dir", priority="high")
    res = run_aidd("--project-dir", str(root), "--check-features", env=quiet)
    assert res.code == 7, res.out + res.err
    assert "broken dir" in res.out
    assert "priority" in res.out
    assert str(bad.relative_to(root)) in res.out
    assert "with space" not in res.out


def test_status_through_the_cli(run_aidd: RunAidd, aidd_env: dict[str, str],
                                tmp_path: Path) -> None:
    """AC-66: FEA-31 counts (an in_progress feature with passes false is failing; Billing has
    a row), the same text in status.md, --json agrees; empty features/ → zeros; none → 3."""
    root = tmp_path / "proj"
    root.mkdir()
    res = run_aidd("--project-dir", str(root), "--status")
    assert res.code == 3, res.err
    (root / ".automaker" / "features").mkdir(parents=True)
    res = run_aidd("--project-dir", str(root), "--status")
    assert res.code == 0, res.err
    assert re.search(r"Total features:\s+0\n", res.out)
    feature(root, "feature-1-a", status="in_progress", category="Billing")
    feature(root, "feature-2-b", passes=True, status="completed")
    res = run_aidd("--project-dir", str(root), "--status")
    assert res.code == 0, res.err
    for label, count in (("Total features", 2), ("Passing", 1), ("Failing", 1),
                         ("In progress", 1)):
        assert re.search(rf"^{label}:\s+{count}$", res.out, re.M), label
    assert re.search(r"^Billing\s+1\s", res.out, re.M)
    status_md = (root / ".automaker" / "status.md").read_text()
    strip = re.compile(r"^Generated: .*$", re.M)
    assert strip.sub("", status_md) == strip.sub("", res.out)
    res = run_aidd("--project-dir", str(root), "--status", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["schema"] == 1
    counts = data["features"]
    assert (counts["total"], counts["passing"], counts["failing"], counts["in_progress"]) == (
        2, 1, 1, 1)
    assert {c["name"] for c in data["categories"]} == {"Billing", "Core"}


def test_status_md_is_rewritten_before_each_agent_start(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-67: the second attempt sees a status.md showing what the first attempt changed."""
    onboarded(project)
    path = feature(project, "feature-1-a")
    feature(project, "feature-2-b")
    done = json.loads(path.read_text()) | {"passes": True, "status": "completed"}
    status = ".automaker/status.md"
    fake_agent.script(
        [{"snapshot": status, "as": "status-1"},
         {"write_file": ".automaker/features/feature-1-a/feature.json", "text": json.dumps(done)},
         *OK],
        [{"snapshot": status, "as": "status-2"}, *OK])
    res = run_aidd("--project-dir", str(project), "--max-iterations", "2", *FAST, env=env)
    assert res.code == 0, res.out + res.err
    first = (fake_agent.record_dir / "status-1").read_text()
    second = (fake_agent.record_dir / "status-2").read_text()
    assert re.search(r"^Passing:\s+0$", first, re.M), first
    assert re.search(r"^Passing:\s+1$", second, re.M), second


# == Audits ====================================================================================
def test_invalid_finding_is_left_as_the_agent_wrote_it(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-74: the invalid finding is logged and listed in the next prompt, byte-identical."""
    fid = "audit-security-1767605415-bad-query"
    text = json.dumps({"id": "audit-security-1-other", "category": "Security",
                       "description": "d", "status": "backlog", "passes": False,
                       "auditSource": "SECURITY"}, indent=3) + "\n  \n"
    fake_agent.script([{"write_file": f".automaker/features/{fid}/feature.json", "text": text},
                       *OK])
    res = run_aidd("--project-dir", str(project), "--audit", "SECURITY", "--max-iterations", "2",
                   *FAST, env=env)
    assert res.code == 0, res.out + res.err
    path = project / ".automaker" / "features" / fid / "feature.json"
    assert path.read_text() == text
    rel = f".automaker/features/{fid}/feature.json"
    assert f"invalid finding {rel}:" in log(project, 1)
    assert f"`{rel}`" in prompt(project, 2)


# == Logs, events, extraction ==================================================================
def test_log_numbers_follow_the_highest_numbered_file(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-79: `007.log` and `notes.log` present → 008.log, then 009.log."""
    folder = iterations(project)
    folder.mkdir(parents=True)
    (folder / "007.log").write_text("old\n")
    (folder / "notes.log").write_text("mine\n")
    (folder / "0123-notes.txt").write_text("not a number prefix followed by a dot\n")
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "2", *FAST, env=env)
    assert res.code == 0, res.out + res.err
    assert sorted(p.name for p in folder.glob("*.log")) == [
        "007.log", "008.log", "009.log", "notes.log"]
    assert [e["number"] for e in events(project, "iteration_start")] == [8, 9]


def test_log_holds_header_output_trailer_and_post_attempt_lines(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-80: SUP-95 header items, `Sending <kind> prompt to <CLI>`, the agent's bytes, the
    SUP-96 trailer, then post-attempt lines, in that order."""
    fake_agent.script([{"line": "AGENT-BYTES-1"}, {"init": True}, {"say": "hello"},
                       {"finish": True}, {"exit": 5}])
    res = run_aidd("--project-dir", str(project), "--quit-on-abort", "1", "--max-iterations", "3",
                   "--model", "prov/m-1", "--no-clean", "--extract-structured", *FAST, env=env)
    assert res.code == 5, res.out + res.err
    text = log(project)
    order = [
        f"[aidd] aidd {aidd.__version__}",
        "[aidd] Iteration 1 of 3 (log 001)",
        "[aidd] Phase: main",
        "[aidd] Prompt: onboarding (",
        "prov/m-1",
        "[aidd] CLI: opencode 1.18.33 (",
        f"[aidd] Project: {project}",
        "max iterations 3",
        "quit-on-abort 1",
        "no-clean on",
        "extract on",
        "Log: .automaker/iterations/001.log",
        "[aidd] Started: ",
        "Sending onboarding prompt to OpenCode (",
        "AGENT-BYTES-1\n",
        "» assistant: hello",
        "[aidd] OpenCode finished: result 5 (failure, exit_status) after ",
        "[aidd] --- end of iteration 1 (attempt 001) ---",
        "[aidd] Finished: ",
        "consecutive failures (--quit-on-abort 1); exiting with 5",
    ]
    positions = [text.find(item) for item in order]
    assert all(p >= 0 for p in positions), [o for o, p in zip(order, positions, strict=True)
                                            if p < 0]
    assert positions == sorted(positions)
    for item in ("timeout 30s", "idle 10s", "nudge 5s"):
        assert item in text
    started_at = re.search(r"^\[aidd\] Started: (\S+)$", text, re.M)
    assert started_at
    assert datetime.fromisoformat(started_at.group(1)).tzinfo is not None


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
                   "--max-iterations", "1", *FAST, env=env)
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


def test_extraction_after_every_attempt_and_in_batch(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-83: NNN.json with the LOG-32 keys after every attempt, failed ones included; a failed
    extraction changes no exit code; --extract-batch writes one JSON per log and exits 0."""
    keys = {"version", "iterationNumber", "featureSlug", "featureDescription", "cli",
            "promptType", "timestamps", "toolCalls", "filesModified", "filesRead",
            "filesCreated", "commands", "outcome", "errors", "summary", "tokens", "costUsd"}
    # attempt 003 makes its own NNN.json a directory: its extraction cannot be written
    blocker = {"write_file": ".automaker/iterations/003.json/blocker", "text": "x"}
    fake_agent.script([{"init": True}, blocker, *OK], [{"init": True}, *FAIL],
                      [{"init": True}, *OK])
    folder = iterations(project)
    folder.mkdir(parents=True)
    (folder / "002.log").write_text("[aidd] Iteration 1 (log 002)\nfrom an earlier run\n")
    res = run_aidd("--project-dir", str(project), "--max-iterations", "3",
                   "--extract-structured", *FAST, env=env)
    assert res.code == 0, res.out + res.err
    assert (folder / "003.json").is_dir()  # not written: a warning instead
    assert any("003" in e["message"] for e in events(project, "warning"))
    failed = json.loads((folder / "004.json").read_text())
    assert keys <= set(failed)
    assert failed["version"] == "1.0"
    assert failed["outcome"]["status"] == "failure"
    assert failed["outcome"]["exitCode"] == 3
    assert keys <= set(json.loads((folder / "005.json").read_text()))
    (folder / "003.json" / "blocker").unlink()
    (folder / "003.json").rmdir()
    for name in ("004.json", "005.json"):
        (folder / name).unlink()
    res = run_aidd("--project-dir", str(project), "--extract-batch", env=env)
    assert res.code == 0, res.out + res.err
    logs = sorted(p.stem for p in folder.glob("*.log"))
    assert logs == ["002", "003", "004", "005"]
    assert sorted(p.stem for p in folder.glob("*.json")) == logs
    assert len(fake_agent.records()) == 3
