"""Supervision through the real `aidd` process and the fake CLIs (SUP-14..81, ADP-30..36).

Each scenario runs `python -m aidd` with its own fake-agent script and records, so scenarios
that must wait out the 5 s kill grace (a grandchild ignoring SIGTERM) run side by side.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.conftest import FAKES, FakeAgent
from tests.fakes.attempt import pid_alive

CLIS = {"opencode": "opencode", "kilocode": "kilo", "claude-code": "claude"}
GRACE_S = 5.0  # SUP-40: aidd's kill grace; not configurable
SLACK_S = 3.0  # startup and scheduling on a loaded 2-core machine


@dataclass
class Scenario:
    """One `aidd` run on its own project with its own fake-agent script and records."""

    root: Path
    cli: str
    args: tuple[str, ...]
    env: dict[str, str]
    fake: FakeAgent
    proc: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    ended: float = 0.0
    out: str = ""
    err: str = ""
    code: int | None = None
    extra_pids: list[int] = field(default_factory=list)

    @property
    def project(self) -> Path:
        return self.root / "proj"

    @property
    def iterations(self) -> Path:
        return self.project / ".automaker" / "iterations"

    def start(self) -> Scenario:
        argv = [sys.executable, "-m", "aidd", "--project-dir", str(self.project),
                "--cli", self.cli, "--no-clean", *self.args]
        self.started = time.monotonic()
        self.proc = subprocess.Popen(argv, env=self.env, cwd=self.root, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return self

    def wait(self, timeout: float = 40) -> Scenario:
        assert self.proc is not None
        out, err = self.proc.communicate(timeout=timeout)
        self.ended = time.monotonic()
        self.out, self.err = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        self.code = self.proc.returncode
        return self

    @property
    def elapsed_s(self) -> float:
        return self.ended - self.started

    def wait_for(self, ready: Callable[[], bool], limit_s: float = 20) -> None:
        """Poll a condition the fake makes true (a pid file, a record), failing after limit."""
        deadline = time.monotonic() + limit_s
        while not ready():
            assert self.proc is not None
            assert self.proc.poll() is None, "aidd ended early"
            assert time.monotonic() < deadline, "condition never held"
            time.sleep(0.02)

    def events(self) -> list[dict[str, Any]]:
        lines = (self.project / ".automaker" / "events.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines]

    def named(self, event: str) -> list[dict[str, Any]]:
        return [e for e in self.events() if e["event"] == event]

    def log(self, name: str = "001.log") -> str:
        return (self.iterations / name).read_text(encoding="utf-8", errors="replace")

    def tree_started(self) -> bool:
        return (self.fake.record_dir / "stubborn").exists()

    def tree_pids(self) -> list[int]:
        pids = [r["pid"] for r in self.fake.records()]
        return pids + [p for p in (self.fake.pid("child"), self.fake.pid("grandchild")) if p]


@pytest.fixture
def scenario(tmp_path: Path, aidd_env: dict[str, str]) -> Iterator[Callable[..., Scenario]]:
    made: list[Scenario] = []

    def make(cli: str, *invocations: Any, args: tuple[str, ...] = ()) -> Scenario:
        root = tmp_path / f"s{len(made)}-{cli}"
        (root / "proj").mkdir(parents=True)
        (root / "proj" / "README.md").write_text("existing code\n")
        fake = FakeAgent(FAKES / "bin", root / "records", root / "script.json")
        fake.record_dir.mkdir()
        fake.script(*invocations)
        env = {**aidd_env, "PATH": f"{fake.bin_dir}{os.pathsep}{os.environ['PATH']}",
               "FAKE_AGENT_PYTHON": sys.executable, "FAKE_AGENT_SCRIPT": str(fake.script_path),
               "FAKE_AGENT_RECORD": str(fake.record_dir)}
        made.append(Scenario(root, cli, args, env, fake))
        return made[-1]

    yield make
    for s in made:
        if s.proc is not None and s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()
        for pid in [*s.tree_pids(), *s.extra_pids]:
            _kill_if_ours(pid)


def _kill_if_ours(pid: int) -> None:
    """Cleanup after a failure: only a process that is still one of the fake's tree."""
    try:
        cmd = " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return
    if "fake_agent" in cmd or cmd.startswith("sleep 10"):
        os.kill(pid, signal.SIGKILL)


def run_together(scenarios: list[Scenario], timeout: float = 40) -> None:
    for s in scenarios:
        s.start()
    for s in scenarios:
        s.wait(timeout)


def nudge_text(s: Scenario) -> str:
    """The rendered nudge, as aidd logged it after its first `nudge sent` line."""
    lines = s.log().splitlines()
    start = next(i for i, ln in enumerate(lines) if "nudge sent" in ln) + 1
    block = []
    for line in lines[start:]:
        if "  nudge: " not in line:
            break
        block.append(line.split("  nudge: ", 1)[1])
    assert block, "no nudge text logged"
    return "\n".join(block)


def alive(pids: list[int]) -> list[int]:
    return [p for p in pids if pid_alive(p)]


STUBBORN = [  # the agent and a setsid'd grandchild ignore SIGTERM; a plain child does not
    {"spawn": ["sleep", "1000"], "detach": True, "ignore": ["TERM"], "pid_file": "grandchild"},
    {"spawn": ["sleep", "1001"], "pid_file": "child"},
    {"ignore": ["TERM"]},
    {"mark": "stubborn"},  # all of the above is in place
]


# -- nudges (SUP-20, ADP-30..33, AC-36..38) -------------------------------------------------
def test_nudges_reach_every_cli_and_output_restarts_stage_one(
        scenario: Callable[..., Scenario]) -> None:
    """Each fake goes silent twice; the second nudge proves the answer restarted stage 1
    (without a reset, stage 2 would run on to the kill at 20 s with no second nudge)."""
    silent = {"sleep": 30}
    claude = scenario("claude-code", [{"init": True}, {"say": "working"}, {"echo_stdin": 1},
                                      {"echo_stdin": 1}, {"result": {}}],
                      args=("--max-iterations", "1", "--idle-nudge-timeout", "1",
                            "--idle-timeout", "20"))
    relaunched = [
        scenario(cli, [{"session": "ses_X"}, {"init": True}, {"say": "working"}, silent],
                 [{"session": "ses_X"}, {"say": "back once"}, silent],
                 [{"session": "ses_X"}, {"say": "back twice"}, {"finish": True}],
                 args=("--max-iterations", "1", "--idle-nudge-timeout", "1",
                       "--idle-timeout", "20"))
        for cli in ("opencode", "kilocode")
    ]
    run_together([claude, *relaunched])
    for s in (claude, *relaunched):
        assert s.code == 0, s.err
        (end,) = s.named("iteration_end")
        assert end["result"] == 0
        nudges = s.named("nudge")
        assert [n["delivered"] for n in nudges] == [True, True]
        assert all(0.95 <= n["silence_s"] <= 2.0 for n in nudges), nudges
        assert s.named("kill") == [] or all(k["reason"] == "nudge" for k in s.named("kill"))
        assert s.elapsed_s < 2 + 2 * SLACK_S
    text = nudge_text(claude)
    assert len(text) > 20
    received = [t.rstrip("\n") for t in claude.fake.stdin_texts(0)]
    assert received == [text, text]  # user messages on stream-json stdin
    assert f"» assistant: echo: {text.splitlines()[0]}" in claude.out
    assert claude.log().count("nudge sent (stdin)") == 2
    for s in relaunched:
        first, second, third = s.fake.records()
        digest = hashlib.sha256(f"{nudge_text(s)}\n".encode()).hexdigest()
        for later in (second, third):
            assert later["argv"][:5] == ["run", "--format", "json", "--session", "ses_X"]
            assert later["stdin_sha256"] == digest  # the nudge, alone, then EOF
        assert alive([first["pid"], second["pid"]]) == []
        assert s.log().count("nudge sent (relaunch)") == 2
        assert "» assistant: back twice" in s.out


# -- kills: idle, wall clock (SUP-22, SUP-30, SUP-40..43, AC-36, AC-40, AC-44) --------------
@pytest.mark.parametrize("ending", ["idle", "timeout"])
def test_kills_leave_no_process_of_the_tree(scenario: Callable[..., Scenario],
                                            ending: str) -> None:
    if ending == "idle":
        steps = [{"init": True}, {"say": "spawning"}, *STUBBORN, {"sleep": 60}]
        args = ("--idle-nudge-timeout", "0", "--idle-timeout", "1", "--timeout", "60")
        result, reason, kill_reason, due = 71, "idle_timeout", "idle", 1.0
    else:
        steps = [{"init": True}, {"say": "spawning"}, *STUBBORN,
                 {"drip": "tick\n", "every": 0.1, "count": 10_000}]
        args = ("--idle-nudge-timeout", "0", "--idle-timeout", "0", "--timeout", "2")
        result, reason, kill_reason, due = 124, "wall_timeout", "timeout", 2.0
    runs = [scenario(cli, steps, args=("--max-iterations", "1", *args)) for cli in CLIS]
    run_together(runs)
    for s in runs:
        assert s.code == 0, s.err  # a failed attempt under --max-iterations is a normal end
        (end,) = s.named("iteration_end")
        assert (end["result"], end["reason"]) == (result, reason)
        pids = s.tree_pids()
        assert len(pids) == 3
        assert alive(pids) == []
        (kill,) = s.named("kill")
        assert kill["reason"] == kill_reason
        assert kill["escalated"] is True  # the grandchild needed SIGKILL
        assert set(pids) <= {p["pid"] for p in kill["pids"]}
        log = s.log()
        assert f"killed the agent tree ({kill_reason})" in log
        assert f"result {result}" in log
        assert s.elapsed_s < due + GRACE_S + SLACK_S


# -- signals to aidd (SUP-81, AC-54) --------------------------------------------------------
def test_sigterm_and_sigint_to_aidd_kill_the_tree_and_exit_124(
        scenario: Callable[..., Scenario]) -> None:
    steps = [{"init": True}, {"say": "spawning"}, *STUBBORN, {"sleep": 60}]
    args = ("--max-iterations", "3", "--idle-timeout", "0", "--timeout", "60")
    runs = {sig: scenario(cli, steps, args=args).start()
            for sig, cli in ((signal.SIGTERM, "claude-code"), (signal.SIGINT, "opencode"))}
    for s in runs.values():
        s.wait_for(s.tree_started)
    sent = {}
    for sig, s in runs.items():
        assert s.proc is not None
        s.proc.send_signal(sig)
        sent[sig] = time.monotonic()
    for sig, s in runs.items():
        s.wait()
        assert s.code == 124, s.err
        assert s.ended - sent[sig] < GRACE_S + SLACK_S
        pids = s.tree_pids()
        assert len(pids) == 3
        assert alive(pids) == []
        assert not (s.project / ".automaker" / "aidd.lock").exists()
        assert len(s.fake.records()) == 1  # no further iteration
        events = s.events()
        assert events[-1]["event"] == "run_end"
        assert events[-1]["reason"] == "signal"
        (end,) = s.named("iteration_end")
        assert (end["result"], end["reason"]) == (124, "signal")
        log = s.log().splitlines()
        assert f"interrupted by {sig.name}; killing the agent tree" in "\n".join(log)
        tail = [ln for ln in log if ln.startswith("[aidd")][-2:]
        assert tail[0] == "[aidd] --- end of iteration 1 (attempt 001) ---"
        assert tail[1].startswith("[aidd] Finished: ")
        assert log[-1] == tail[1]


# -- leftovers of a normal exit (SUP-42, AC-42) ---------------------------------------------
@pytest.mark.parametrize("keep", [False, True])
def test_leftovers_after_a_normal_exit(scenario: Callable[..., Scenario], keep: bool) -> None:
    steps = [{"init": True}, {"say": "started a dev server"},
             {"spawn": ["sleep", "1000"], "pid_file": "child"},
             {"spawn": ["sleep", "1002"], "detach": True, "pid_file": "grandchild"},
             {"finish": True}, {"exit": 0}]
    extra = ("--keep-children",) if keep else ()
    s = scenario("opencode", steps, args=("--max-iterations", "1", *extra)).start().wait()
    child, grandchild = s.fake.pid("child"), s.fake.pid("grandchild")
    assert child is not None
    assert grandchild is not None
    s.extra_pids += [child, grandchild]
    assert s.code == 0, s.err
    (end,) = s.named("iteration_end")
    assert end["result"] == 0
    (reaped,) = s.named("children_reaped")
    assert reaped["kept"] is keep
    assert {p["pid"] for p in reaped["pids"]} == {child, grandchild}
    log = s.log()
    for pid, cmd in ((child, "sleep 1000"), (grandchild, "sleep 1002")):
        assert f"{pid} sleep ({cmd})" in log
    if keep:
        assert "left running by the agent (--keep-children)" in log
        assert alive([child, grandchild]) == [child, grandchild]
    else:
        assert "killed what the agent left running" in log
        assert alive([child, grandchild]) == []
    assert s.elapsed_s < 1 + SLACK_S + 1


# -- rate limits (SUP-50, SUP-60, AC-45) ----------------------------------------------------
def _rate_limited(cli: str) -> list[dict[str, Any]]:
    if cli == "claude-code":
        return [{"init": True}, {"json": {"type": "rate_limit_event", "rate_limit_info": {
            "status": "rejected", "resetsAt": int(time.time()) + 2,
            "rateLimitType": "five_hour"}}}, {"result": {
                "is_error": True, "subtype": "error", "result": "rate limited"}}, {"exit": 1}]
    return [{"init": True}, {"error": {"name": "APIError", "message": "Too many requests",
                                       "status": 429, "headers": {"retry-after": "1"}}},
            {"exit": 1}]


@pytest.mark.parametrize("cli", list(CLIS))
def test_rate_limit_pauses_and_retries_the_same_iteration(scenario: Callable[..., Scenario],
                                                          cli: str) -> None:
    ok = [{"init": True}, {"say": "done"}, {"finish": True}]
    s = scenario(cli, _rate_limited(cli), ok,
                 args=("--max-iterations", "1", "--rate-limit-buffer", "0")).start().wait()
    assert s.code == 0, s.err
    names = sorted(p.name for p in s.iterations.glob("*.log"))
    assert names == ["001.ratelimited.log", "002.log"]
    assert len(s.fake.records()) == 2  # the limited attempt did not use up --max-iterations
    (sleep,) = s.named("rate_limit_sleep")
    assert sleep["source"] == ("rate_limit_event" if cli == "claude-code" else "retry_after")
    assert 0 < sleep["seconds"] <= 2.5
    until = sleep["until"][11:19]  # HH:MM:SS of the wake time, as the console shows it
    assert f"rate limited; sleeping until {until}" in s.out
    assert "rate limited; sleeping until" in s.log("001.ratelimited.log")
    ends = s.named("iteration_end")
    assert [(e["number"], e["result"]) for e in ends] == [(1, 74), (2, 0)]
    starts = s.named("iteration_start")
    assert [e["index"] for e in starts] == [starts[0]["index"]] * 2
    assert s.events()[-1]["iterations"] == 1


# -- claude stream-json as the user sees it (ADP-36, LOG-3, LOG-5) --------------------------
def test_claude_transcript_is_readable_and_raw_json_stays_in_the_log(
        scenario: Callable[..., Scenario]) -> None:
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

