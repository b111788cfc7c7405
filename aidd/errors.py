"""Exit codes and the errors that carry them, and the words for each result: the one place the
numbers live (docs/architecture.md "Owners")."""

from __future__ import annotations

from enum import IntEnum, unique
from typing import NamedTuple


@unique
class ExitCode(IntEnum):
    SUCCESS = 0  # normal end; success result
    GENERAL_ERROR = 1  # lock held, template error, internal error
    INVALID_ARGS = 2  # bad command line or configuration
    NOT_FOUND = 3  # a named file or resource is missing or unusable
    PERMISSION_DENIED = 4  # reserved, never produced
    TIMEOUT = 5  # reserved, never produced (timeouts are 124)
    ABORTED = 6  # stop requested through .automaker/.stop
    VALIDATION_ERROR = 7  # content failed validation; unsupported platform
    CLI_ERROR = 8  # agent CLI missing or unusable without a human
    BUDGET_EXHAUSTED = 9  # a budget is exhausted (wall time, tokens, cost, daily)
    # --strict-exit: a run that would end 0 but whose health verdict is failed (stuck, most
    # attempts failed; aidd/reports/health.py), so a scheduler sees a bad night (issue 28)
    RUN_FAILED = 10
    NO_ASSISTANT = 70  # result: no assistant output
    IDLE_TIMEOUT = 71  # result: silent past the idle budget, or hung (--max-nudges), tree killed
    PROVIDER_ERROR = 72  # result: provider failure
    PROJECT_COMPLETE = 73  # completion confirmed (two-phase)
    RATE_LIMITED = 74  # result only: usage or rate limit, the run sleeps and retries
    NO_WORK = 75  # result: the agent exited 0 having done nothing
    # result: the conversation ran out of context or turns (the CLI said so); the next attempt
    # starts a fresh conversation with aidd's hand-off (issue 32)
    CONTEXT_EXHAUSTED = 76
    TIMEOUT_OR_SIGNAL = 124  # result: wall-clock limit; exit: aidd got a signal


# What each exit code means, as `aidd --help-exit-codes` prints it (the README's table says the
# same; a test holds them together). The codes 4 and 5 are reserved and never produced.
EXIT_MEANINGS: dict[int, str] = {
    ExitCode.SUCCESS: "normal end: limits reached, mode done, stuck, only features waiting for "
                      "a human review or set aside left; a one-shot's success",
    ExitCode.GENERAL_ERROR: "general error: project locked by another aidd, template error, "
                            "internal error",
    ExitCode.INVALID_ARGS: "invalid arguments or configuration; spec needed but missing",
    ExitCode.NOT_FOUND: "a named file or resource is missing (spec, project dir, roadmap, "
                        "feature, audit)",
    ExitCode.ABORTED: "stopped through .automaker/.stop (aidd --stop)",
    ExitCode.VALIDATION_ERROR: "validation error (--check-features, audit definition, roadmap, "
                               "platform)",
    ExitCode.CLI_ERROR: "agent CLI missing or unusable without a human (e.g. authentication)",
    ExitCode.BUDGET_EXHAUSTED: "a budget is exhausted (wall time, tokens, cost, daily)",
    ExitCode.RUN_FAILED: "only with --strict-exit: the run would have exited 0, but its health "
                         "verdict is failed",
    ExitCode.NO_ASSISTANT: "result: no assistant output (an exit code only via --quit-on-abort)",
    ExitCode.IDLE_TIMEOUT: "result: idle timeout, the agent killed as hung (exit: via "
                           "--quit-on-abort)",
    ExitCode.PROVIDER_ERROR: "result: provider error (exit: via --quit-on-abort)",
    ExitCode.PROJECT_COMPLETE: "project complete (two-phase completion confirmed)",
    ExitCode.RATE_LIMITED: "result only: rate limited (aidd sleeps and retries)",
    ExitCode.NO_WORK: "result: no work (exit: via --quit-on-abort)",
    ExitCode.CONTEXT_EXHAUSTED: "result: context exhausted, the conversation ran out of context "
                                "or turns (exit: via --quit-on-abort)",
    ExitCode.TIMEOUT_OR_SIGNAL: "result: the attempt's wall-clock limit; exit: aidd interrupted "
                                "by SIGINT, SIGTERM or SIGHUP",
}


class ResultName(NamedTuple):
    key: str  # in machine output: the extraction's status (LOG-32), the report's chart class
    words: str  # what the reports show


# One name per attempt result, so no table calls 124 one thing and another table another.
# 124 is the wall-clock limit or a signal to aidd (docs/exit-codes), and says so everywhere.
RESULTS: dict[int, ResultName] = {  # by ExitCode
    ExitCode.SUCCESS: ResultName("success", "success"),
    ExitCode.NO_ASSISTANT: ResultName("no_assistant", "no assistant output"),
    ExitCode.IDLE_TIMEOUT: ResultName("idle_timeout", "idle timeout"),
    ExitCode.PROVIDER_ERROR: ResultName("provider_error", "provider error"),
    ExitCode.RATE_LIMITED: ResultName("rate_limited", "rate limited"),
    ExitCode.NO_WORK: ResultName("no_work", "no work"),
    ExitCode.CONTEXT_EXHAUSTED: ResultName("context_exhausted", "context exhausted"),
    ExitCode.TIMEOUT_OR_SIGNAL: ResultName("timeout", "wall timeout or signal"),
}
TIMEOUTS = (ExitCode.IDLE_TIMEOUT, ExitCode.TIMEOUT_OR_SIGNAL)  # results that are a timeout
SIGNAL_BASE = 128  # a result of 128 + N: the agent died of signal N (not sent by aidd)
_SIGNALS = 32


def result_key(code: int) -> str | None:
    """The result's name in machine output; None for a status aidd has no name for."""
    name = RESULTS.get(code)
    return None if name is None else name.key


def result_words(code: int) -> str:
    """What a report calls the result `code`: its name, `signal N`, or `exit N`."""
    name = RESULTS.get(code)
    if name is not None:
        return name.words
    signal = code - SIGNAL_BASE
    return f"signal {signal}" if 0 < signal < _SIGNALS else f"exit {code}"


class AiddError(Exception):
    """An expected failure: `cli.main` prints `aidd: error: <message>` and exits `exit_code`."""

    exit_code: ExitCode = ExitCode.GENERAL_ERROR

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(AiddError):
    exit_code = ExitCode.INVALID_ARGS


class NotFoundError(AiddError):
    exit_code = ExitCode.NOT_FOUND


class ValidationError(AiddError):
    exit_code = ExitCode.VALIDATION_ERROR


class AgentCliError(AiddError):
    exit_code = ExitCode.CLI_ERROR


class LockHeldError(AiddError):
    exit_code = ExitCode.GENERAL_ERROR


class TemplateError(AiddError):
    exit_code = ExitCode.GENERAL_ERROR


class CrashReported(Exception):
    """An internal error whose traceback the run loop already wrote to `log` (REL-20)."""

    def __init__(self, log: object, summary: str = "") -> None:
        super().__init__(str(log))
        self.log = log
        self.summary = summary  # e.g. "OSError: [Errno 28] No space left on device"


def shown(value: object, limit: int = 80) -> str:
    """A value as an error message may quote it: never a whole megabyte (issue 13 item 14)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"
