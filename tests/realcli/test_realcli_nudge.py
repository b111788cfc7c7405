"""A nudge never loses the task (issue 17 part 2): the real `aidd` with each real CLI against
the mock model. (a) A nudge 1 s after the start, before the CLI's first model request: the
model still gets the task, followed by the nudge. (b) A model request that hangs mid-stream is
nudged, and the run recovers and succeeds.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from . import clis
from .aidd_run import NUDGE_MARK, AiddRun, run_aidd
from .conftest import StartMock, require_cli
from .recording import RecordedRequest
from .scenario import GREETING, Reply, ReplyKind, Scenario

pytestmark = [pytest.mark.realcli, pytest.mark.timeout(240)]

TASK_MARK = "TASK-MARK-5b1f"
TASK = f"Create hello.txt with a greeting. {TASK_MARK}"
CLAUDE_DELAY_S = 3  # claude starts in ~0.5 s: a slow start (many MCP servers, a cold disk)


def slow_claude(box: clis.Sandbox) -> Path:
    """A directory holding `claude` that waits before it starts the real one (its
    `--version` runs at once), so the nudge comes before claude has read its stdin."""
    real = clis.binary("claude")
    folder = box.root / "slow-bin"
    folder.mkdir()
    wrapper = folder / "claude"
    wrapper.write_text(f'#!/bin/sh\ncase "$*" in *--print*) sleep {CLAUDE_DELAY_S};; esac\n'
                       f'exec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    return folder


def task_comes_first(texts: list[str]) -> bool:
    joined = "\n".join(texts)
    return TASK_MARK in joined and joined.index(TASK_MARK) < joined.index(NUDGE_MARK)


def first_nudge(run: AiddRun) -> dict[str, Any]:
    nudges = run.events("nudge")
    assert nudges, run.out[-3000:]
    return nudges[0]


def every_request_has_the_task(requests: list[RecordedRequest]) -> bool:
    return all(r.carries_text(TASK_MARK) for r in requests)


@pytest.mark.parametrize("cli", clis.CLIS)
def test_a_nudge_before_the_first_request_keeps_the_task(
    cli: str, start_mock: StartMock, sandbox: clis.Sandbox
) -> None:
    require_cli(cli)
    target = sandbox.project / "hello.txt"
    mock = start_mock(Scenario([Reply.write_file(str(target), GREETING),
                                Reply.final("All done.")]))
    # Output alone is watched: a starting CLI's CPU use would otherwise count as busy
    # (issue 17 part 1) and could hold this nudge back until after the first request.
    run = run_aidd(cli, mock, sandbox, "--prompt", TASK, "--max-iterations", "1",
                   "--idle-nudge-timeout", "1", "--idle-timeout", "60", "--timeout", "120",
                   "--liveness", "output",
                   path_first=slow_claude(sandbox) if cli == "claude" else None)
    assert run.code == 0, run.out[-3000:] + run.err
    assert target.read_text() == GREETING
    nudge = first_nudge(run)
    assert nudge["delivered"] is True, nudge
    first = mock.primary_requests()[0]  # the nudge came before any model request...
    assert first.carries_text(NUDGE_MARK), [t[-200:] for t in first.user_texts()]
    assert task_comes_first(first.user_texts())  # ...and the model saw the task, then it
    assert every_request_has_the_task(mock.primary_requests())
    log = run.log(1)
    if cli == "claude":  # stdin keeps the order: the prompt is ahead of the nudge
        assert (nudge["method"], nudge["task_check"], nudge["with_task"]) == (
            "stdin", "stdin", False)
        assert re.search(r"nudge sent \(stdin\)( \[.*\])? alone: the prompt is ahead of it on "
                         r"stdin\n", log), log[-3000:]
    else:  # relaunched with the prompt again: no session yet, or one without the prompt
        assert (nudge["method"], nudge["with_task"]) == ("relaunch", True), nudge
        assert nudge["task_check"] in ("none", "export"), nudge
        assert re.search(r"nudge sent \(relaunch\)( \[.*\])? with the original task: ", log)


@pytest.mark.parametrize("cli", clis.CLIS)
def test_a_request_hanging_mid_stream_is_nudged_and_the_run_recovers(
    cli: str, start_mock: StartMock, sandbox: clis.Sandbox
) -> None:
    require_cli(cli)
    target = sandbox.project / "hello.txt"
    mock = start_mock(Scenario([Reply.of(ReplyKind.STALL, text="Starting the work now"),
                                Reply.write_file(str(target), GREETING),
                                Reply.final("All done.")]))
    run = run_aidd(cli, mock, sandbox, "--prompt", TASK, "--max-iterations", "1",
                   "--idle-nudge-timeout", "2", "--idle-timeout", "60", "--timeout", "120")
    assert run.code == 0, run.out[-3000:] + run.err
    assert target.read_text() == GREETING
    stalled = [r for r in mock.primary_requests() if r.reply == "stall"]
    assert len(stalled) == 1
    # opencode/kilo printed the session id with the stalled stream's first frames: nudge only
    mid_stream = [e for e in run.events("nudge") if e["task_check"] in ("output", "stdin")]
    assert mid_stream, run.events("nudge")
    assert (mid_stream[0]["delivered"], mid_stream[0]["with_task"]) == (True, False)
    after = [r for r in mock.primary_requests() if r.at_s > stalled[0].at_s]
    assert after, mock.primary_requests()
    assert task_comes_first(after[0].user_texts())
    assert every_request_has_the_task(mock.primary_requests())
    assert "finished: result 0 (success" in run.log(1)
