"""A finding, the result of one check: its status, what was found, the one-line fix, and which
exit code it stands for when it fails. The worst failure decides the doctor's exit code."""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum, unique
from typing import NamedTuple

from aidd.errors import ExitCode


@unique
class Status(Enum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"  # not checked: --offline, or what it needs failed already


class Finding(NamedTuple):
    name: str  # the check, e.g. "cli", "auth", "disk"
    status: Status
    detail: str  # what was found, one line
    fix: str = ""  # what to do about it, one line (warn and fail)
    code: ExitCode = ExitCode.SUCCESS  # the doctor's exit code when this fails
    blocks_run: bool = False  # a failure that makes every attempt of a run fail

    @property
    def failed(self) -> bool:
        return self.status is Status.FAIL


def ok(name: str, detail: str) -> Finding:
    return Finding(name, Status.OK, detail)


def warn(name: str, detail: str, fix: str) -> Finding:
    return Finding(name, Status.WARN, detail, fix)


def skip(name: str, detail: str) -> Finding:
    return Finding(name, Status.SKIP, detail)


def fail(name: str, detail: str, fix: str, code: ExitCode, *, blocks_run: bool = False
         ) -> Finding:
    return Finding(name, Status.FAIL, detail, fix, code, blocks_run)


# Which failure decides the exit code when several fail: the CLI first (nothing runs without
# it), then the configuration, then missing files; any other failure is a general error.
_PRECEDENCE = (ExitCode.CLI_ERROR, ExitCode.INVALID_ARGS, ExitCode.NOT_FOUND,
               ExitCode.GENERAL_ERROR)


def exit_code(findings: Iterable[Finding]) -> ExitCode:
    """0 when nothing failed (warnings alone included), else the worst failure's code."""
    codes = {f.code for f in findings if f.failed}
    fallback = ExitCode.GENERAL_ERROR if codes else ExitCode.SUCCESS
    return next((code for code in _PRECEDENCE if code in codes), fallback)
