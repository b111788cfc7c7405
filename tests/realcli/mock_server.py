"""A scripted model server on 127.0.0.1: Anthropic Messages and OpenAI chat completions, SSE.

Standard library only. Every request is recorded (credentials stripped); replies come from a
`Scenario`. Hanging and stalled streams are released when the server stops.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar

from . import anthropic_wire, openai_wire
from .recording import RecordedRequest, RequestLog, clean_headers
from .scenario import Reply, ReplyKind, Scenario

_ERROR_KINDS = {
    ReplyKind.RATE_LIMIT,
    ReplyKind.OVERLOADED,
    ReplyKind.SERVER_ERROR,
    ReplyKind.AUTH_ERROR,
    ReplyKind.CONTEXT_OVERFLOW,
}
GARBAGE = b"\x00\xff\xfenot an event stream <html>\r\n{{{\n\nevent: ???\ndata: {broken json\n\n"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, mock: MockServer) -> None:
        self.mock = mock
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-stream is normal here; anything else is still shown."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    _ids: ClassVar[itertools.count[int]] = itertools.count(1)

    def log_message(self, format: str, *args: Any) -> None:
        """Silenced: every request is recorded instead."""

    def setup(self) -> None:
        super().setup()
        self.server.mock._track(self.connection, add=True)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.mock._track(self.connection, add=False)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            ids = list(self.server.mock.model_ids)
            self._record(None, 0, primary=False, reply="models")
            self._send_json(200, openai_wire.models_json(ids))
        else:
            self._record(None, 0, primary=False, reply="not found")
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        raw = self._read_body()
        body = _parse(raw)
        if self.path.split("?")[0].endswith("/count_tokens"):
            self._record(body, len(raw), primary=False, reply="count_tokens")
            self._send_json(200, {"input_tokens": max(1, len(raw) // 4)})
            return
        api = self._api()
        if api is None:
            self._record(body, len(raw), primary=False, reply="not found")
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        primary = bool(isinstance(body, dict) and body.get("tools"))
        mock = self.server.mock
        scenario = mock.scenario
        if not primary:
            reply = scenario.side_reply
        elif scenario.after_tool is not None and _answers_tool(body):
            reply = scenario.after_tool
        else:
            reply = scenario.take()
        self._record(body, len(raw), primary=primary, reply=reply.kind.value)
        self._answer(api, reply, body if isinstance(body, dict) else {})

    def _api(self) -> Any:
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/messages"):
            return anthropic_wire
        if path.endswith("/chat/completions"):
            return openai_wire
        return None

    def _answer(self, api: Any, reply: Reply, body: dict[str, Any]) -> None:
        msg_id = f"{'msg_' if api is anthropic_wire else 'chatcmpl-'}mock{next(self._ids):06d}"
        if reply.kind in _ERROR_KINDS:
            status, headers, payload = api.error_answer(reply)
            self._send(status, headers, payload)
        elif reply.kind is ReplyKind.GARBAGE:
            self._send(200, {"content-type": "text/event-stream"}, GARBAGE)
        elif reply.kind is ReplyKind.HANG:
            self._stream([], reply, hold=True)
        elif reply.kind is ReplyKind.STALL:
            self._stream(api.stall_frames(reply, body, msg_id), reply, hold=True)
        elif body.get("stream"):
            self._stream(api.stream_frames(reply, body, msg_id), reply, hold=False)
        elif api is anthropic_wire:
            self._send_json(200, api.message_json(reply, body, msg_id))
        else:
            self._send_json(200, api.completion_json(reply, body, msg_id))

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            parts = []
            while size := int(self.rfile.readline().strip().split(b";")[0] or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()
            return b"".join(parts)
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def _record(self, body: Any, size: int, *, primary: bool, reply: str) -> None:
        log = self.server.mock.log
        log.add(
            RecordedRequest(
                self.command,
                self.path,
                clean_headers(self.headers.items()),
                body,
                size,
                primary,
                reply,
                round(log.since_start(), 3),
            )
        )

    def _send_json(self, status: int, obj: dict[str, Any]) -> None:
        self._send(status, {"content-type": "application/json"}, json.dumps(obj).encode())

    def _send(self, status: int, headers: dict[str, str], payload: bytes) -> None:
        self.send_response(status)
        every = self.server.mock.scenario.headers
        for name, value in {**every, **headers, "content-length": str(len(payload))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _stream(self, frames: list[bytes], reply: Reply, *, hold: bool) -> None:
        """Chunked SSE; with `hold`, keep the stream open after the frames until the stop."""
        self.send_response(200)
        for name, value in (
            *self.server.mock.scenario.headers.items(),
            ("content-type", "text/event-stream"),
            ("cache-control", "no-cache"),
            ("transfer-encoding", "chunked"),
        ):
            self.send_header(name, value)
        self.end_headers()
        stopping = self.server.mock.stopping
        for frame in frames:
            if reply.chunk_delay_s and stopping.wait(reply.chunk_delay_s):
                break
            self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
            self.wfile.flush()
        if hold:
            stopping.wait()
            self.close_connection = True
            return
        self.wfile.write(b"0\r\n\r\n")


def _answers_tool(body: dict[str, Any]) -> bool:
    """The request's last message carries a tool's result (Anthropic: a `tool_result` block in
    a user message; OpenAI: a `tool` message)."""
    messages = body.get("messages") or [{}]
    last = messages[-1] if isinstance(messages[-1], dict) else {}
    if last.get("role") == "tool":
        return True
    content = last.get("content")
    return isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") == "tool_result" for p in content)


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


class MockServer:
    """`with MockServer(Scenario([...])) as mock:` then point a CLI at `mock.url`."""

    def __init__(self, scenario: Scenario, model_ids: tuple[str, ...] = ("mock-model",)) -> None:
        self.scenario = scenario
        self.model_ids = model_ids
        self.log = RequestLog()
        self.stopping = threading.Event()
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        self._httpd = _Server(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            name="mock-model",
            kwargs={"poll_interval": 0.05},
            daemon=True,
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        return self.log.all()

    def primary_requests(self) -> list[RecordedRequest]:
        return [r for r in self.log.all() if r.primary]

    def start(self) -> MockServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release hanging streams, close every connection, stop serving."""
        self.stopping.set()
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        if self._thread.is_alive():
            self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._conns_lock:
            (self._conns.add if add else self._conns.discard)(conn)

    def __enter__(self) -> MockServer:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
