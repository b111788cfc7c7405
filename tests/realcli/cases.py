"""The scenarios recorded against each real CLI (see record.py) and what each one checks."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import prompts
from .scenario import Reply, ReplyKind


class Action(enum.Enum):
    RUN = "run"  # deliver the prompt, let the CLI finish (claude: close stdin after `result`)
    NUDGE = "nudge"  # after the first model request: wait in silence, nudge as ADP-30, SIGINT


@dataclass(frozen=True)
class Case:
    name: str
    replies: Callable[[Path], list[Reply]]  # project dir -> replies
    prompt: str = prompts.HELLO
    action: Action = Action.RUN
    cap_s: float = 90.0  # a CLI still running then gets SIGINT (noted in the meta)
    silence_s: float = 15.0  # NUDGE: how long to watch a silent CLI before nudging
    pty: bool = True
    claude_interrupt: bool = False  # NUDGE: send a control_request interrupt before the nudge
    only: tuple[str, ...] = ("claude", "opencode", "kilo")
    extra_args: dict[str, tuple[str, ...]] = field(default_factory=dict)  # cli -> added argv
    env_drop: tuple[str, ...] = ()  # variables removed from the CLI's environment
    env_add: dict[str, str] = field(default_factory=dict)  # variables added to it


def _err(kind: ReplyKind, retry_after_s: int = 2) -> Reply:
    return Reply.of(kind, retry_after_s=retry_after_s)


CASES: dict[str, Case] = {
    c.name: c
    for c in (
        Case(
            "hello",
            lambda p: [
                Reply.write_file(str(p / "hello.txt"), "hello from the mock\n"),
                Reply.final("All done: hello.txt written."),
            ],
        ),
        Case(
            "hello_pipes",
            lambda p: [Reply.write_file(str(p / "hello.txt"), "hello\n"), Reply.final("All done.")],
            pty=False,
        ),
        Case(
            "shell",
            lambda p: [
                Reply.shell("echo mock-shell-ok | tee shell-ran.txt"),
                Reply.final("Shell done."),
            ],
            prompt=prompts.SHELL,
        ),
        # kilo auto-rejects shell permission without --auto; opencode's default already allows it
        Case(
            "shell_auto",
            lambda p: [
                Reply.shell("echo mock-shell-ok | tee shell-ran.txt"),
                Reply.final("Shell done."),
            ],
            prompt=prompts.SHELL,
            only=("opencode", "kilo"),
            extra_args={"opencode": ("--auto",), "kilo": ("--auto",)},
        ),
        # a path outside the project is an "ask" permission for both: auto-rejected without --auto
        Case(
            "write_outside",
            lambda p: [
                Reply.write_file(str(p.parent / "outside.txt"), "x\n"),
                Reply.final("Wrote outside."),
            ],
            only=("opencode", "kilo"),
        ),
        Case(
            "hello_model",
            lambda p: [Reply.final("Model flag accepted.")],
            extra_args={
                "claude": ("--model", "mock-model"),
                "opencode": ("--model", "mock/mock-model"),
                "kilo": ("--model", "mock/mock-model"),
            },
        ),
        Case(
            "refused_as_root",
            lambda p: [Reply.final()],
            env_drop=("IS_SANDBOX",),
            cap_s=20,
            only=("claude",),
        ),
        Case(
            "not_logged_in",
            lambda p: [Reply.final()],
            env_drop=("ANTHROPIC_API_KEY",),
            cap_s=30,
            only=("claude",),
        ),
        Case(
            "rate_limit",
            lambda p: [
                _err(ReplyKind.RATE_LIMIT),
                _err(ReplyKind.RATE_LIMIT),
                Reply.final("Recovered after the rate limit."),
            ],
        ),
        Case(
            "rate_limit_long",
            lambda p: [
                _err(ReplyKind.RATE_LIMIT, 25),
                Reply.final("Recovered after a long rate limit."),
            ],
        ),
        # claude retries 10 times with backoff up to ~37 s: about 3 minutes before it gives up
        Case("rate_limit_persistent", lambda p: [_err(ReplyKind.RATE_LIMIT, 1)], cap_s=300),
        # the documented CLAUDE_CODE_MAX_RETRIES=0: the 429 result comes at once (aidd's e2e test)
        Case(
            "rate_limit_no_retry",
            lambda p: [_err(ReplyKind.RATE_LIMIT, 1), Reply.final("Not reached.")],
            cap_s=30,
            only=("claude",),
            env_add={"CLAUDE_CODE_MAX_RETRIES": "0"},
        ),
        Case("server_error", lambda p: [_err(ReplyKind.SERVER_ERROR)], cap_s=300),
        Case("overloaded", lambda p: [_err(ReplyKind.OVERLOADED)], cap_s=300),
        Case("auth_error", lambda p: [_err(ReplyKind.AUTH_ERROR)], cap_s=300),
        Case("garbage", lambda p: [Reply.of(ReplyKind.GARBAGE)], cap_s=60),
        Case("context_overflow", lambda p: [_err(ReplyKind.CONTEXT_OVERFLOW)], cap_s=120),
        Case(
            "hang",
            lambda p: [Reply.of(ReplyKind.HANG), Reply.final("Recovered after the nudge.")],
            action=Action.NUDGE,
            cap_s=60,
        ),
        Case(
            "hang_interrupt",
            lambda p: [Reply.of(ReplyKind.HANG), Reply.final("Recovered.")],
            action=Action.NUDGE,
            cap_s=60,
            silence_s=5,
            claude_interrupt=True,
            only=("claude",),
        ),
        Case(
            "hang_long",
            lambda p: [Reply.of(ReplyKind.HANG), Reply.final("Recovered.")],
            action=Action.NUDGE,
            cap_s=60,
            silence_s=180,
        ),
        Case(
            "stall",
            lambda p: [
                Reply.of(ReplyKind.STALL, text="Starting the work now"),
                Reply.final("Recovered after the nudge."),
            ],
            action=Action.NUDGE,
            cap_s=60,
        ),
        Case(
            "big_prompt",
            lambda p: [Reply.final("Got the big prompt.")],
            prompt=prompts.big_prompt(),
            cap_s=120,
        ),
    )
}
