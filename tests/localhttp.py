"""Real HTTP endpoints on 127.0.0.1 for the notification tests: one that records every request
(answering with a status chosen per path, or a redirect), a dead one that accepts connections and
never answers, and one that answers a byte at a time."""

from __future__ import annotations

import json
import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # with the query
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Recorder:
    url: str  # http://127.0.0.1:PORT
    requests: list[Request] = field(default_factory=list)
    status: dict[str, int] = field(default_factory=dict)  # path -> status; else 200
    redirect: dict[str, str] = field(default_factory=dict)  # path -> a 302 to this URL

    def paths(self) -> list[str]:
        return [r.path for r in list(self.requests)]

    def to(self, path: str) -> list[Request]:
        return [r for r in list(self.requests) if r.path == path]


@contextmanager
def recorder(tls: ssl.SSLContext | None = None) -> Iterator[Recorder]:
    """A server recording each request (over TLS with `tls`, a server context); its URL ends
    without a slash."""
    box: list[Recorder] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            rec = box[0]
            rec.requests.append(Request(self.command, self.path, dict(self.headers), body))
            if self.path in rec.redirect:
                self.send_response(302)
                self.send_header("Location", rec.redirect[self.path])
            else:
                self.send_response(rec.status.get(self.path, 200))
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        do_GET = do_POST = do_HEAD = _answer  # http.server's names for the methods

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    scheme = "https" if tls is not None else "http"
    box.append(Recorder(f"{scheme}://127.0.0.1:{server.server_address[1]}"))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield box[0]
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def dead_endpoint() -> Iterator[str]:
    """A URL whose server takes connections (the kernel's backlog does) and never answers a
    byte: each request waits out its whole timeout. Closed at the end, so whatever still
    waits on it fails at once."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


@contextmanager
def drip_endpoint(every_s: float = 0.2) -> Iterator[str]:
    """A URL whose server answers each request one byte each `every_s` seconds, for minutes:
    every socket wait is short, the answer never ends. Closed at the end."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.settimeout(0.1)  # the accepting thread looks at `stop` that often
    stop = threading.Event()

    def drip(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            for byte in (b"HTTP/1.1 200 OK\r\n" + b"X: " + b"y" * 100_000):
                if stop.wait(every_s):
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=drip, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        stop.set()
        sock.close()
