"""One try at one delivery: an HTTP request (webhook, ntfy, heartbeat ping) or a command run
bounded by the timeout and tree-killed. A failure is a `DeliveryError` whose reason, in words,
never quotes the URL or the command (they may hold secrets)."""

from __future__ import annotations

import base64
import json
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from email.header import Header
from http.client import HTTPException
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from aidd import __version__
from aidd.clock import SystemClock
from aidd.session import proctree

TIMEOUT_S = 5.0
_KILL_GRACE_S = 1.0
_READ_LIMIT = 64 * 1024  # of a response: only its status matters


class DeliveryError(Exception):
    def __init__(self, why: str, *, retry: bool = True) -> None:
        super().__init__(why)
        self.why = why
        self.retry = retry  # False when trying again cannot help (HTTP 404, no such program)


def deliver(job: Mapping[str, Any], env: Mapping[str, str], timeout_s: float = TIMEOUT_S
            ) -> None:
    """Send `job` (courier.py makes them) once; raises DeliveryError."""
    kind = job.get("kind")
    if kind == "webhook":
        http(job["url"], json.dumps(job["body"], ensure_ascii=False).encode(),
             {"Content-Type": "application/json"}, timeout_s)
    elif kind == "ntfy":  # a failed run's end: high priority and a tag (issue 28)
        tags = {"Tags": ",".join(job["tags"])} if job.get("tags") else {}
        http(job["url"], str(job["message"]).encode(), {
            "Title": _header(job["title"]), "Priority": str(job.get("priority") or "default"),
            **tags}, timeout_s)
    elif kind == "ping":
        http(job["url"], None, {}, timeout_s)
    elif kind == "command":
        extra = {"AIDD_NOTIFY_TRIGGER": str(job["body"]["trigger"]),
                 "AIDD_NOTIFY_TITLE": str(job["title"]),
                 "AIDD_NOTIFY_MESSAGE": str(job["message"])}
        run(["/bin/sh", "-c", job["command"]], json.dumps(job["body"]).encode() + b"\n",
            job.get("cwd"), {**env, **extra}, timeout_s)
    elif kind == "desktop":
        run(["notify-send", "--app-name=aidd", str(job["title"]), str(job["message"])], b"",
            None, env, timeout_s)
    else:
        raise DeliveryError(f"unknown kind {str(kind)[:20]!r}", retry=False)


def http(url: str, data: bytes | None, headers: Mapping[str, str], timeout_s: float) -> None:
    """GET (no data) or POST; a 2xx or 3xx answer is delivered. `timeout_s` bounds each socket
    wait and the reading of the answer."""
    url, auth = credentials(url)
    request = urllib.request.Request(url, data=data, headers={
        "User-Agent": f"aidd/{__version__}", **auth, **headers})
    deadline = time.monotonic() + timeout_s
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            read = 0
            while read < _READ_LIMIT and time.monotonic() < deadline:
                chunk = answer.read(4096)
                if not chunk:
                    break
                read += len(chunk)
    except urllib.error.HTTPError as exc:
        exc.close()  # it holds the answer's socket
        raise DeliveryError(f"HTTP {exc.code}", retry=exc.code >= 500 or exc.code in (408, 429)
                            ) from None
    except urllib.error.URLError as exc:
        raise DeliveryError(reason(exc.reason)) from None
    except (OSError, HTTPException, ValueError) as exc:
        raise DeliveryError(reason(exc)) from None


def credentials(url: str) -> tuple[str, dict[str, str]]:
    """`https://user:password@host/…` (an ntfy topic with access control, say): urllib would
    take the user for part of the host name, so they go into a Basic Authorization header."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, {}
    host = parts.netloc.rpartition("@")[2]
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    token = base64.b64encode(pair.encode()).decode()
    return urlunsplit(parts._replace(netloc=host)), {"Authorization": f"Basic {token}"}


def reason(exc: object) -> str:
    """Why a request failed, without the URL (an exception's text may hold it)."""
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate: {exc.verify_message}"
    if isinstance(exc, ssl.SSLError):
        return f"TLS: {exc.reason or 'handshake failed'}"
    if isinstance(exc, socket.gaierror):
        return "host not found"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return type(exc).__name__


def run(argv: list[str], stdin: bytes, cwd: str | None, env: Mapping[str, str],
        timeout_s: float) -> None:
    """`argv` in its own session, `stdin` written to it; at its end or at the timeout its whole
    tree is killed (what it left running too), as the gate does with a command."""
    scope = proctree.TreeScope()
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
    except OSError as exc:
        raise DeliveryError(f"cannot start {Path(argv[0]).name}: "
                            f"{(exc.strerror or type(exc).__name__).lower()}", retry=False
                            ) from None
    timed_out = False
    try:
        proc.communicate(stdin, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        proctree.terminate(lambda: scope.snapshot(proc.pid), grace_s=_KILL_GRACE_S,
                           clock=SystemClock(),
                           root=proctree.Root(proc.pid, lambda: proc.poll() is None))
        proc.wait()
    if timed_out:
        raise DeliveryError(f"timed out after {timeout_s:g}s")
    if proc.returncode:
        code = proc.returncode
        raise DeliveryError(f"exited {128 - code if code < 0 else code}")


def _header(text: object) -> str:
    """A header value: ASCII as it is, else an RFC 2047 encoded word (ntfy decodes it), never
    folded (maxlinelen=0): an HTTP header has one line."""
    value = " ".join(str(text).split())
    return value if value.isascii() else Header(value, "utf-8", maxlinelen=0).encode()
