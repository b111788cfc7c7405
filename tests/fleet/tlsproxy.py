"""A TLS front for the lab's local Temporal server, as Temporal Cloud is one: it terminates TLS
(ALPN h2, a certificate from a test CA, optionally a client certificate required: mTLS) and
passes the bytes on to the plain dev server. It records each client's certificate and the
`authorization` headers of the gRPC calls (HTTP/2 HEADERS frames decoded with hpack)."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import hpack
import trustme

_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_HEADERS, _CONTINUATION = 0x1, 0x9
_PADDED, _PRIORITY, _END_HEADERS = 0x8, 0x20, 0x4


@dataclass(frozen=True)
class Credentials:
    """Files a client uses: the CA that signed the proxy's certificate, a client certificate
    and its key (signed by the same CA)."""

    ca: Path
    cert: Path
    key: Path


@dataclass
class Seen:
    clients: list[object] = field(default_factory=list)  # subjectAltName of each client served
    authorization: list[str] = field(default_factory=list)


def credentials(ca: trustme.CA, where: Path, who: str = "worker@aidd.test") -> Credentials:
    where.mkdir(parents=True, exist_ok=True)
    issued = ca.issue_cert(who)
    made = Credentials(where / "ca.pem", where / "client.pem", where / "client.key")
    ca.cert_pem.write_to_path(str(made.ca))
    issued.cert_chain_pems[0].write_to_path(str(made.cert))
    issued.private_key_pem.write_to_path(str(made.key))
    return made


class _Headers:
    """One connection's client-to-server bytes: the HEADERS blocks, decoded in order (hpack
    keeps a table across the connection)."""

    def __init__(self, seen: Seen) -> None:
        self.seen, self.buf, self.block = seen, bytearray(), bytearray()
        self.decoder, self.preface = hpack.Decoder(), False

    def feed(self, data: bytes) -> None:
        self.buf += data
        if not self.preface:
            if len(self.buf) < len(_PREFACE):
                return
            del self.buf[:len(_PREFACE)]
            self.preface = True
        while len(self.buf) >= 9:
            length = int.from_bytes(self.buf[:3], "big")
            if len(self.buf) < 9 + length:
                return
            kind, flags, payload = self.buf[3], self.buf[4], bytes(self.buf[9:9 + length])
            del self.buf[:9 + length]
            if kind == _HEADERS:
                if flags & _PADDED:
                    payload = payload[1:len(payload) - payload[0]]
                self.block = bytearray(payload[5:] if flags & _PRIORITY else payload)
            elif kind == _CONTINUATION:
                self.block += payload
            else:
                continue
            if flags & _END_HEADERS:
                for name, value in self.decoder.decode(bytes(self.block), raw=True):
                    if name.lower() == b"authorization":
                        self.seen.authorization.append(value.decode())


@contextlib.contextmanager
def tls_front(upstream: str, ca: trustme.CA, *, client_cert: bool) -> Iterator[tuple[str, Seen]]:
    """`HOST:PORT` of a TLS front for `upstream`, and what it saw, while the block runs."""
    seen, ready = Seen(), threading.Event()
    loop = asyncio.new_event_loop()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    context.set_alpn_protocols(["h2"])
    if client_cert:
        ca.configure_trust(context)
        context.verify_mode = ssl.CERT_REQUIRED
    host, port = upstream.rsplit(":", 1)
    bound: list[str] = []
    stopping: list[asyncio.Event] = []

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                   headers: _Headers | None) -> None:
        try:
            with contextlib.suppress(OSError, ConnectionError):
                while data := await reader.read(65536):
                    if headers is not None:
                        headers.feed(data)
                    writer.write(data)
                    await writer.drain()
        finally:
            writer.close()  # the other side's end, passed on (also when cancelled)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peercert")
        seen.clients.append(peer.get("subjectAltName") if peer else None)
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            writer.close()
            return
        await asyncio.gather(pipe(reader, up_writer, _Headers(seen)),
                             pipe(up_reader, writer, None), return_exceptions=True)

    async def main() -> None:
        server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=context)
        bound.append(f"127.0.0.1:{server.sockets[0].getsockname()[1]}")
        stopping.append(asyncio.Event())
        ready.set()
        await stopping[0].wait()
        server.close()
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
        await server.wait_closed()
        await asyncio.sleep(0.1)  # the closed transports' last callbacks, before the loop ends

    thread = threading.Thread(target=lambda: loop.run_until_complete(main()), daemon=True)
    thread.start()
    assert ready.wait(10), "the TLS front did not start"
    try:
        yield bound[0], seen
    finally:
        loop.call_soon_threadsafe(stopping[0].set)
        thread.join(10)
        loop.close()
