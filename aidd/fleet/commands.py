"""`aidd fleet ...`: the Click group (thin: parse, then one call to `actions`). `aidd.cli`
dispatches here only when the first argument is `fleet`."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from aidd.errors import UsageError
from aidd.fleet import actions
from aidd.fleet.server import BINARY_ENV
from aidd.fleet.spec import load_fleet

_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _where(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options that say which server: --server, --namespace, --temporal-bin."""
    func = click.option("--temporal-bin", "binary", metavar="PATH", envvar=BINARY_ENV,
                        help=f"the temporal CLI for the local server [env {BINARY_ENV}; "
                             "default: the one temporal-bin installed]")(func)
    func = click.option("--namespace", default="default", show_default=True,
                        help="the Temporal namespace")(func)
    return click.option("--server", metavar="HOST:PORT", envvar="AIDD_FLEET_SERVER",
                        help="a Temporal server [env AIDD_FLEET_SERVER; default: the local "
                             "server under the user's data dir, started when needed]")(func)


def _place(server: str | None, namespace: str, binary: str | None) -> actions.Where:
    return actions.Where(server, namespace, binary, dict(os.environ))


@click.group("fleet", context_settings=_CONTEXT)
def fleet() -> None:
    """Many projects on Temporal: one workflow per project, each running plain aidd."""


@fleet.command(context_settings=_CONTEXT)
@click.argument("fleet_file", metavar="FLEET.yaml", type=click.Path(path_type=Path))
@click.option("--slots", type=click.IntRange(1), default=actions.DEFAULT_SLOTS,
              show_default=True, help="aidd runs at once in this command's worker")
@click.option("--worker/--no-worker", "worker", default=None,
              help="run a worker here until every project ends [default: with the local "
                   "server yes, with --server no]")
@_where
def up(fleet_file: Path, slots: int, worker: bool | None, server: str | None, namespace: str,
       binary: str | None) -> int:
    """Start or resume every project's run."""
    spec = load_fleet(fleet_file)
    here = worker if worker is not None else server is None
    return asyncio.run(actions.up(_place(server, namespace, binary), spec, worker=here,
                                  slots=slots))


@fleet.command(context_settings=_CONTEXT)
@click.option("--fleet", "fleet_name", metavar="NAME", help="only this fleet's projects")
@click.option("--json", "as_json", is_flag=True, help="print JSON")
@_where
def status(fleet_name: str | None, as_json: bool, server: str | None, namespace: str,
           binary: str | None) -> int:
    """One line per project: state, iteration, last result, features passing, cost."""
    return asyncio.run(actions.status(_place(server, namespace, binary), fleet_name, as_json))


@fleet.command(context_settings=_CONTEXT)
@click.argument("projects", nargs=-1, metavar="[PROJECT]...")
@click.option("--now", is_flag=True, help="SIGTERM now instead of after the current attempt")
@_where
def stop(projects: tuple[str, ...], now: bool, server: str | None, namespace: str,
         binary: str | None) -> int:
    """Stop projects (all by default) after their current attempt, as `.stop` does."""
    return asyncio.run(actions.stop(_place(server, namespace, binary), projects, now))


@fleet.command(context_settings=_CONTEXT)
@click.option("--slots", type=click.IntRange(1), default=actions.DEFAULT_SLOTS,
              show_default=True, help="aidd runs at once on this machine")
@_where
def worker(slots: int, server: str | None, namespace: str, binary: str | None) -> int:
    """A worker: runs the fleet's projects on this machine until SIGINT or SIGTERM."""
    return asyncio.run(actions.work(_place(server, namespace, binary), slots))


@fleet.command(context_settings=_CONTEXT)
@click.argument("fleet_file", metavar="FLEET.yaml", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="print JSON")
@click.option("--since", metavar="WHEN", help="the window's start, as aidd --report --since "
                                              "[default: each project's last run]")
def report(fleet_file: Path, as_json: bool, since: str | None) -> int:
    """One morning report across the fleet's projects on this machine (their aidd --report)."""
    where = _place(None, "default", None)
    return actions.report(where, load_fleet(fleet_file), as_json, since)


@fleet.command(context_settings=_CONTEXT)
@_where
def down(server: str | None, namespace: str, binary: str | None) -> int:
    """Stop the local Temporal server (its database stays; the next command starts it)."""
    return actions.down(_place(server, namespace, binary))


def main(args: Sequence[str]) -> int:
    """Run `aidd fleet ARGS`; Click's usage errors become aidd's (exit 2)."""
    try:
        code = fleet.main(list(args), prog_name="aidd fleet", standalone_mode=False)
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    except click.ClickException as exc:
        raise UsageError(exc.format_message()) from None
    return int(code) if isinstance(code, int) else 0
