"""Notification and heartbeat endpoints reachable: a HEAD (a GET when HEAD is not allowed),
bounded by 3 s, to each configured URL; command and desktop targets: their program found.
Nothing is ever shown of a URL but its scheme, host and port (notify.targets.shown_url)."""

from __future__ import annotations

import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Mapping
from http.client import HTTPException

from aidd import __version__
from aidd.config import Settings
from aidd.console import program_of
from aidd.doctor.findings import Finding, fail, ok, skip, warn
from aidd.errors import ExitCode
from aidd.notify.send import credentials, exchange, reason
from aidd.notify.targets import Target, TargetKind, shown_url

TIMEOUT_S = 3.0
_NOT_ALLOWED = (405, 501)  # HEAD refused: ask again with GET


def check_endpoints(settings: Settings, offline: bool, timeout_s: float = TIMEOUT_S
                    ) -> list[Finding]:
    findings = [_target(target, settings.environ, offline, timeout_s)
                for target in settings.notify_targets]
    if settings.heartbeat_url:
        findings.append(_url("heartbeat", settings.heartbeat_url, offline, timeout_s))
    return findings or [ok("notify", "no notification target or heartbeat configured")]


def _target(target: Target, environ: Mapping[str, str], offline: bool, timeout_s: float
            ) -> Finding:
    name = f"notify {target.kind.value}"
    if target.url is not None:
        return _url(name, target.url, offline, timeout_s)
    program = "notify-send" if target.kind is TargetKind.DESKTOP else _program(target.command)
    if program is None or _found(program, environ):
        return ok(name, f"{target.shown()}: ready")
    return warn(name, f"{target.shown()}: {program} not found", f"install {program}, or "
                "remove this target")


def _program(command: str | None) -> str | None:
    """The program the command line starts (it runs under /bin/sh), when it has one."""
    try:
        return program_of(command or "")
    except ValueError:
        return None


def _found(program: str, environ: Mapping[str, str]) -> bool:
    if "/" in program:
        return os.access(program, os.X_OK)
    return shutil.which(program, path=environ.get("PATH")) is not None


def _url(name: str, url: str, offline: bool, timeout_s: float) -> Finding:
    shown = shown_url(url)
    if offline:
        return skip(name, f"{shown} not asked (--offline)")
    try:
        status = _status(url, timeout_s)
    except (urllib.error.URLError, OSError, HTTPException, ValueError) as exc:
        why = reason(exc.reason if isinstance(exc, urllib.error.URLError) else exc)
        return fail(name, f"{shown} unreachable: {why}", "check the URL, the network and "
                    "any proxy", ExitCode.INVALID_ARGS)
    if 300 <= status < 400:
        return warn(name, f"{shown} answered HTTP {status}, a redirect: aidd does not follow "
                    "one, so nothing sent there arrives", "use the address it redirects to")
    if status < 400 or status in _NOT_ALLOWED:
        return ok(name, f"{shown} reachable (HTTP {status})")
    return warn(name, f"{shown} answered HTTP {status}", "check the URL (its path and token)")


def _status(url: str, timeout_s: float) -> int:
    """The HTTP status of a HEAD to `url`, or of a GET when HEAD is not allowed."""
    status = 0
    for method in ("HEAD", "GET"):
        plain, auth = credentials(url)  # user:password@ goes into a header, as when sending
        request = urllib.request.Request(plain, method=method,
                                         headers={"User-Agent": f"aidd/{__version__}", **auth})
        try:
            with exchange(request, timeout_s) as answer:  # as a delivery: no redirect followed
                status = int(answer.status)
        except urllib.error.HTTPError as exc:
            exc.close()  # it holds the answer's socket
            status = exc.code
        if status not in _NOT_ALLOWED:
            break
    return status
