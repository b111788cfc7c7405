"""The iteration log, `NNN.log`: its number, header, the agent's output as the user sees it,
the trailer, and the structured extraction written beside it (LOG-1..5, LOG-30..32, AC-29,
AC-79, AC-80, AC-83)."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import aidd
from tests.conftest import FakeAgent
from tests.integration.runs import FAIL, LIMITS, OK, READ, RunAidd, events, iterations, log
from tests.integration.scenario import MakeScenario


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
    res = run_aidd("--project-dir", str(project), "--max-iterations", "2", *LIMITS, env=env)
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
                   "--model", "prov/m-1", "--no-clean", "--extract-structured", *LIMITS, env=env)
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


def test_claude_trailer_has_the_result_tokens_and_cost(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-29: the trailer (console and log) carries the result event's usage and cost."""
    fake_agent.script([{"init": True}, READ, {"say": "hi"}, {"result": {
        "total_cost_usd": 0.1234,
        "usage": {"input_tokens": 4321, "output_tokens": 765}}}])
    res = run_aidd("--project-dir", str(project), "--cli", "claude-code", "--max-iterations", "1",
                   *LIMITS, env=env)
    assert res.code == 0, res.err
    for text in (res.out, log(project)):
        trailer = text[text.index("finished: result 0"):text.index("--- end of iteration 1")]
        assert "4321" in trailer
        assert "765" in trailer
        assert "$0.1234" in trailer
    (end,) = events(project, "iteration_end")
    assert end["cost_usd"] == 0.1234
    assert (end["tokens"]["input"], end["tokens"]["output"]) == (4321, 765)


# -- claude stream-json as the user sees it (ADP-36, LOG-3, LOG-5) --------------------------
def test_claude_transcript_is_readable_and_raw_json_stays_in_the_log(
        scenario: MakeScenario) -> None:
    steps = [{"init": True, "model": "claude-fake-4"}, {"say": "I will add the file."},
             {"tool": {"name": "Bash", "input": {"command": "pytest -q"},
                       "output": "3 passed " * 60}},
             {"tool": {"name": "Write", "input": {"file_path": "src/app.py"}, "output": "ok"}},
             {"result": {"duration_ms": 83_000, "num_turns": 4, "total_cost_usd": 0.4321,
                         "result": "Added src/app.py."}}]
    s = scenario("claude-code", steps, args=("--max-iterations", "1")).start().wait()
    assert s.code == 0, s.err
    tool_output = ("3 passed " * 60).strip()
    expected = [
        "» start · model claude-fake-4 · conversation ses_fake…",
        "» assistant: I will add the file.",
        "» tokens: in 10 · out 5",
        "» tool: Bash (toolu_0_0002…) pytest -q",
        f"» result: toolu_0_0002… {tool_output[:200]}… ({len(tool_output)} chars)",
        "» tool: Write (toolu_0_0004…) src/app.py",
        "» done · 1m 23s · 4 turns · $0.4321",
        "» final: Added src/app.py.",
    ]
    log = s.log()
    for line in expected:
        assert line in s.out.splitlines(), line
        assert line in log.splitlines(), line
    raw = [ln for ln in log.splitlines() if ln.startswith("{")]
    assert [json.loads(ln)["type"] for ln in raw] == [
        "system", "assistant", "assistant", "user", "assistant", "user", "result"]
    assert not any(ln.startswith("{") for ln in s.out.splitlines())  # console: no raw JSON
    (end,) = s.named("iteration_end")
    assert end["cost_usd"] == 0.4321
    assert end["conversation_id"] == "ses_fake0"


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
                   "--extract-structured", *LIMITS, env=env)
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
