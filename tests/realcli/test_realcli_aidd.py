"""The real `aidd` process driving each real CLI against the mock model server (issue 8).

hello, hang (nudge then kill, result 71), rate limit (74, pause, retry) and a 1 MiB prompt, for
claude, opencode and kilo. Timeouts are injected short; see docs/real-clis.md for the timings.
"""

from __future__ import annotations

import re

import pytest

from . import clis
from .aidd_run import NUDGE_MARK, AiddRun, leftovers, run_aidd
from .conftest import StartMock, require_cli
from .prompts import MIB, big_prompt
from .recording import sha256_text
from .scenario import GREETING, Reply, ReplyKind, Scenario

pytestmark = [pytest.mark.realcli, pytest.mark.timeout(240)]

# (nudge, kill) after silence: the nudge must come after the CLI's first request (kilo needs
# ~7 s to start on an idle 2-core machine), the kill after the relaunched CLI asked again (kilo:
# its session list and export take ~5 s each before the relaunch starts).
HANG_TIMEOUTS = {"claude": (3, 8), "opencode": (10, 28), "kilo": (16, 48)}
# opencode/kilo retry a 429 five times on their own, silently, honouring retry-after (1 s).
RATE_LIMITED_REQUESTS = {"claude": 1, "opencode": 6, "kilo": 6}
# claude retries a 429 ten times over ~3 minutes unless told otherwise (documented variable).
CLAUDE_NO_RETRY = {"CLAUDE_CODE_MAX_RETRIES": "0"}


def transcript_lines(run: AiddRun, number: int) -> tuple[list[str], list[str]]:
    """Rendered `» ` lines on the console and in NNN.log."""
    console = [line for line in run.out.splitlines() if line.startswith("» ")]
    logged = [line for line in run.log(number).splitlines() if line.startswith("» ")]
    return console, logged


def results(run: AiddRun) -> list[int]:
    return [e["result"] for e in run.events("iteration_end")]


@pytest.mark.parametrize("cli", clis.CLIS)
def test_hello_writes_a_file_and_the_transcript_shows_it(
    cli: str, start_mock: StartMock, sandbox: clis.Sandbox
) -> None:
    require_cli(cli)
    target = sandbox.project / "hello.txt"
    mock = start_mock(Scenario([Reply.write_file(str(target), GREETING),
                                Reply.final("All done.")]))
    # With checkpoints (on by default) and a validation gate that is red until the file exists.
    run = run_aidd(cli, mock, sandbox, "--prompt", "Create hello.txt with a greeting.",
                   "--max-iterations", "1", "--idle-nudge-timeout", "60",
                   "--idle-timeout", "120", "--timeout", "120", "--gate", "test -s hello.txt")
    assert run.code == 0, run.out[-3000:] + run.err
    assert target.read_text() == GREETING
    (baseline,) = run.events("gate_baseline")
    assert [c["exit"] for c in baseline["commands"]] == [1]
    assert [(e["number"], e["ok"]) for e in run.events("gate")] == [(1, True)]
    labels = [e["label"] for e in run.events("checkpoint")]
    assert labels == ["001", "001-end"]
    assert results(run) == [0]
    console, logged = transcript_lines(run, 1)
    tool = [line for line in console if line.startswith("» tool: ") and "hello.txt" in line]
    assert tool, console
    assert "» assistant: All done." in console or "» final: All done." in console, console
    assert set(console) <= set(logged)  # the log has every console line (and the raw JSON)
    assert "finished: result 0 (success" in run.log(1)
    assert len(mock.primary_requests()) == 2


@pytest.mark.parametrize("cli", clis.CLIS)
def test_hang_is_nudged_then_the_tree_is_killed(
    cli: str, start_mock: StartMock, sandbox: clis.Sandbox
) -> None:
    require_cli(cli)
    mock = start_mock(Scenario([Reply.of(ReplyKind.HANG)]))  # every request hangs
    nudge_s, idle_s = HANG_TIMEOUTS[cli]
    run = run_aidd(cli, mock, sandbox, "--prompt", "Say hello.", "--max-iterations", "1",
                   "--quit-on-abort", "1", "--idle-nudge-timeout", str(nudge_s),
                   "--idle-timeout", str(idle_s), "--timeout", "200", "--no-clean",
                   cap_s=220)  # liveness: a (re)starting opencode or kilo is busy for seconds
    assert run.code == 71, run.out[-3000:] + run.err  # quit-on-abort exits with the result
    assert results(run) == [71]
    (nudge,) = run.events("nudge")
    assert nudge["delivered"] is True, nudge
    # Liveness (issue 17) judged the CLI waiting on its hung request as silent, not busy.
    assert nudge["state"] in ("waiting", "hung"), nudge
    assert nudge["method"] == ("stdin" if cli == "claude" else "relaunch")
    nudged = [r for r in mock.requests if r.carries_text(NUDGE_MARK)]
    assert nudged, [r.path for r in mock.requests]  # the nudge reached the model
    (kill,) = [e for e in run.events("kill") if e["reason"] == "idle"]
    assert kill["pids"], kill
    log = run.log(1)
    assert "nudge sent" in log
    if cli == "claude":  # the interrupt's echo is rendered, and did not restart the timer
        assert "» turn interrupted (aborted_streaming)" in run.out
    else:  # no sessionID was printed: it came from `session list`; its export shows the
        # prompt (the hung request carried it), so the nudge goes alone (issue 17)
        assert re.search(r"resuming conversation ses_\w+", log), log[-2000:]
        assert (nudge["task_check"], nudge["with_task"]) == ("export", False), nudge
    assert re.search(r"no output for \d+s; killing the agent tree", log), log[-2000:]
    assert leftovers(sandbox, run.killed_pids()) == []


@pytest.mark.parametrize("cli", clis.CLIS)
def test_rate_limit_pauses_then_the_retry_succeeds(
    cli: str, start_mock: StartMock, sandbox: clis.Sandbox
) -> None:
    require_cli(cli)
    target = sandbox.project / "hello.txt"
    limited = [Reply.of(ReplyKind.RATE_LIMIT, retry_after_s=1)] * RATE_LIMITED_REQUESTS[cli]
    mock = start_mock(Scenario([*limited, Reply.write_file(str(target), GREETING),
                                Reply.final("All done.")]))
    run = run_aidd(cli, mock, sandbox, "--prompt", "Create hello.txt with a greeting.",
                   "--max-iterations", "1", "--idle-nudge-timeout", "60",
                   "--idle-timeout", "120", "--timeout", "120",
                   "--rate-limit-buffer", "0", "--rate-limit-fallback", "2",
                   extra_env=CLAUDE_NO_RETRY if cli == "claude" else None)
    assert run.code == 0, run.out[-3000:] + run.err
    assert results(run) == [74, 0]
    (pause,) = run.events("rate_limit_sleep")
    # claude (API key) names no reset time: the fallback; opencode/kilo pass retry-after on.
    assert pause["source"] == ("fallback" if cli == "claude" else "retry_after"), pause
    assert pause["seconds"] <= 2.5
    assert re.search(r"rate limited; sleeping until .+\((fallback|retry_after)", run.out)
    assert (run.iterations / "001.ratelimited.log").exists()
    assert "status 429" in (run.iterations / "001.ratelimited.log").read_text()
    assert "finished: result 0 (success" in run.log(2)
    assert target.read_text() == GREETING


@pytest.mark.parametrize("cli", clis.CLIS)
def test_one_mib_prompt_arrives_byte_exact(
    cli: str, start_mock: StartMock, sandbox: clis.Sandbox
) -> None:
    require_cli(cli)
    marker = "LAST-LINE-MARKER-8c1e5d"
    overrides = sandbox.project / ".automaker" / "prompts"
    overrides.mkdir(parents=True)
    # A project override of the directive template: 1 MiB of long lines, multibyte and
    # terminal control characters, no Jinja syntax; the marker is its last line.
    (overrides / "directive.md").write_text(big_prompt(MIB - 64) + f"\n{marker}\n")
    # The agent works (a tool call): an answer alone, with no change, would be no work (75).
    received = sandbox.project / "received.txt"
    mock = start_mock(Scenario([Reply.write_file(str(received), "received\n"),
                                Reply.final("Received.")]))
    run = run_aidd(cli, mock, sandbox, "--prompt", "unused", "--max-iterations", "1",
                   "--idle-nudge-timeout", "60", "--idle-timeout", "120", "--timeout", "120")
    assert run.code == 0, run.out[-3000:] + run.err
    assert received.read_text() == "received\n"
    sent = run.prompt(1)
    assert len(sent.encode()) > MIB - 4096
    assert sent.rstrip("\n").endswith(marker)
    first = mock.primary_requests()[0]
    assert sha256_text(sent) in first.user_text_sha256s(), [len(t) for t in first.user_texts()]
    assert results(run) == [0]


@pytest.mark.parametrize("cli", clis.CLIS)
def test_an_answer_without_a_tool_call_is_no_work(
    cli: str, start_mock: StartMock, sandbox: clis.Sandbox
) -> None:
    """What users see `claude -p` do: exit 0 after a short answer, no tool call, nothing
    changed. Result 75, which --quit-on-abort 1 makes the exit code (issue 15)."""
    require_cli(cli)
    mock = start_mock(Scenario([Reply.final("Nothing to do.")]))
    run = run_aidd(cli, mock, sandbox, "--prompt", "Do the next task.", "--max-iterations", "1",
                   "--quit-on-abort", "1", "--idle-nudge-timeout", "60",
                   "--idle-timeout", "120", "--timeout", "120")
    assert run.code == 75, run.out[-3000:] + run.err
    (end,) = run.events("iteration_end")
    assert end == {**end, "result": 75, "reason": "no_work", "exit_status": 0, "tool_calls": 0}
    assert "finished: result 75 (failure, no_work)" in run.log(1)
