"""One try at one delivery: an HTTP request (webhook, ntfy, heartbeat ping) or a command run
bounded by the timeout and tree-killed. A failure is a `DeliveryError` whose reason, in words,
never quotes the URL or the command (they may hold secrets)."""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import socket
import ssl
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from email.header import Header
from http.client import HTTPConnection, HTTPException, HTTPResponse, HTTPSConnection
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from aidd import __version__, spawning
from aidd.clock import SystemClock
from aidd.session import proctree

TIMEOUT_S = 5.0
_KILL_GRACE_S = 1.0


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
    """GET (no data) or POST; only a 2xx answer is delivered. A redirect is not followed (it
    would take the credentials to another host, and a POST would arrive as an empty GET): a
    3xx fails. `timeout_s` bounds the whole exchange, not just each socket wait."""
    url, auth = credentials(url)
    request = urllib.request.Request(url, data=data, headers={
        "User-Agent": f"aidd/{__version__}", **auth, **headers})
    try:
        with exchange(request, timeout_s):
            pass  # the status is the answer; its body is never read
    except urllib.error.HTTPError as exc:
        exc.close()  # it holds the answer's socket
        code = exc.code
        if 300 <= code < 400:
            raise DeliveryError(f"HTTP {code}: a redirect, not followed", retry=False) from None
        raise DeliveryError(f"HTTP {code}", retry=code >= 500 or code in (408, 429)) from None
    except urllib.error.URLError as exc:
        raise DeliveryError(reason(exc.reason)) from None
    except (OSError, HTTPException, ValueError) as exc:
        raise DeliveryError(reason(exc)) from None


@contextlib.contextmanager
def exchange(request: urllib.request.Request, timeout_s: float) -> Iterator[HTTPResponse]:
    """`request` sent and its answer open, as `urlopen` does, but no redirect is followed (a
    3xx raises its HTTPError) and at `timeout_s` the connection is shut, whatever it waits
    for: a server dripping its answer a byte at a time keeps every socket wait short (issue 27
    item 12). Raises TimeoutError then."""
    cutoff = _Cutoff(timeout_s)
    opener = urllib.request.build_opener(_Plain(cutoff), _Tls(cutoff), _NoRedirect)
    try:
        with cutoff, opener.open(request, timeout=timeout_s) as answer:
            yield answer
    except (OSError, HTTPException) as exc:
        if cutoff.fired and not isinstance(exc, urllib.error.HTTPError):
            raise TimeoutError from None
        raise


class _Cutoff:
    """The deadline of one exchange: its connection shut down then, from a timer thread."""

    def __init__(self, timeout_s: float) -> None:
        self.fired = False
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        self._timer = threading.Timer(timeout_s, self._fire)
        self._timer.daemon = True

    def __enter__(self) -> None:
        self._timer.start()

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._socks.append(sock)
            if self.fired:
                _shut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._socks:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    """Wakes a read or write blocked on `sock` in another thread (a close would not)."""
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the raw socket's, TLS or not


class _Plain(urllib.request.HTTPHandler):
    def __init__(self, cutoff: _Cutoff) -> None:
        super().__init__()
        self._cutoff = cutoff

    def http_open(self, req: urllib.request.Request) -> HTTPResponse:
        return self.do_open(functools.partial(_Watched, self._cutoff), req)


class _Tls(urllib.request.HTTPSHandler):
    def __init__(self, cutoff: _Cutoff) -> None:
        self._tls = ssl.create_default_context()
        super().__init__(context=self._tls)
        self._cutoff = cutoff

    def https_open(self, req: urllib.request.Request) -> HTTPResponse:
        return self.do_open(functools.partial(_WatchedTls, self._cutoff), req, context=self._tls)


class _Watched(HTTPConnection):
    def __init__(self, cutoff: _Cutoff, host: str, **args: Any) -> None:
        super().__init__(host, **args)
        self._cutoff = cutoff

    def connect(self) -> None:
        super().connect()
        self._cutoff.watch(self.sock)


class _WatchedTls(_Watched, HTTPSConnection):
    """The same watch on a TLS connection (its connect wraps the socket first)."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None  # the 3xx goes on to the default handler, which raises its HTTPError


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
        with spawning.LOCK:
            proc = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdin=subprocess.PIPE,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True)
            spawning.own(proc.pid)
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
        spawning.disown(proc.pid)
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
