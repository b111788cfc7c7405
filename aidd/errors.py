"""Exit codes and the errors that carry them; the one place the numbers live."""

from __future__ import annotations

from enum import IntEnum, unique


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
    NO_ASSISTANT = 70  # result: no assistant output
    IDLE_TIMEOUT = 71  # result: silent past the idle budget, or hung (--max-nudges), tree killed
    PROVIDER_ERROR = 72  # result: provider failure
    PROJECT_COMPLETE = 73  # completion confirmed (two-phase)
    RATE_LIMITED = 74  # result only: usage or rate limit, the run sleeps and retries
    NO_WORK = 75  # result: the agent exited 0 having done nothing
    TIMEOUT_OR_SIGNAL = 124  # result: wall-clock limit; exit: aidd got a signal


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
