"""`aidd fleet ...`: the Click group (thin: parse, then one call to `actions`). `aidd.cli`
dispatches here only when the first argument is `fleet`."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
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
    """The options that say which server: --server, --profile, --namespace, --temporal-bin;
    they reach the command as one `where` (actions.Where)."""

    @functools.wraps(func)
    def placed(*args: Any, server: str | None, profile: str | None, namespace: str | None,
               binary: str | None, **kwargs: Any) -> Any:
        where = actions.Where(server, namespace, binary, dict(os.environ), profile)
        return func(*args, where=where, **kwargs)

    options = [
        click.option("--server", metavar="HOST:PORT", envvar="AIDD_FLEET_SERVER",
                     help="a Temporal server [env AIDD_FLEET_SERVER; default: the local server "
                          "under the user's data dir, started when needed]"),
        click.option("--profile", metavar="NAME", envvar="AIDD_FLEET_PROFILE",
                     help="a profile of Temporal's client configuration (its address, TLS, "
                          "API key; TEMPORAL_* variables apply too) [env AIDD_FLEET_PROFILE]"),
        click.option("--namespace", help="the Temporal namespace [default: the profile's, "
                                         "else default]"),
        click.option("--temporal-bin", "binary", metavar="PATH", envvar=BINARY_ENV,
                     help=f"the temporal CLI for the local server [env {BINARY_ENV}; "
                          "default: the one temporal-bin installed]"),
    ]
    for option in reversed(options):
        placed = option(placed)
    return placed


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
@click.option("--ui", is_flag=True, help="the local server with Temporal's Web UI on loopback "
                                         "(its URL is printed)")
@_where
def up(fleet_file: Path, slots: int, worker: bool | None, ui: bool,
       where: actions.Where) -> int:
    """Start or resume every project's run."""
    if ui and where.remote:
        raise UsageError("--ui is for the local server (a remote one has its own Web UI)")
    where = dataclasses.replace(where, ui=ui)
    spec = load_fleet(fleet_file)
    here = worker if worker is not None else not where.remote
    return asyncio.run(actions.up(where, spec, worker=here, slots=slots))


@fleet.command(context_settings=_CONTEXT)
@click.option("--fleet", "fleet_name", metavar="NAME", help="only this fleet's projects")
@click.option("--json", "as_json", is_flag=True, help="print JSON")
@_where
def status(fleet_name: str | None, as_json: bool, where: actions.Where) -> int:
    """One line per project: state, iteration, last result, features passing, cost."""
    return asyncio.run(actions.status(where, fleet_name, as_json))


@fleet.command(context_settings=_CONTEXT)
@click.option("--fleet", "fleet_name", metavar="NAME", help="only this fleet's projects")
@_where
def watch(fleet_name: str | None, where: actions.Where) -> int:
    """Every project on one screen, refreshed every 2 s: arrows or j/k select, Enter opens
    the project's aidd watch (its directory on this machine), q quits."""
    return actions.watch(where, fleet_name)


@fleet.command(context_settings=_CONTEXT)
@click.argument("projects", nargs=-1, metavar="[PROJECT]...")
@click.option("--now", is_flag=True, help="SIGTERM now instead of after the current attempt")
@_where
def stop(projects: tuple[str, ...], now: bool, where: actions.Where) -> int:
    """Stop projects (all by default) after their current attempt, as `.stop` does."""
    return asyncio.run(actions.stop(where, projects, now))


@fleet.command(context_settings=_CONTEXT)
@click.option("--slots", type=click.IntRange(1), default=actions.DEFAULT_SLOTS,
              show_default=True, help="aidd runs at once on this machine")
@_where
def worker(slots: int, where: actions.Where) -> int:
    """A worker: runs the fleet's projects on this machine until SIGINT or SIGTERM."""
    return asyncio.run(actions.work(where, slots))


@fleet.command(context_settings=_CONTEXT)
@click.argument("fleet_file", metavar="FLEET.yaml", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="print JSON")
@click.option("--html", metavar="FILE", type=click.Path(path_type=Path),
              help="write it as one self-contained HTML page instead")
@click.option("--since", metavar="WHEN", help="the window's start, as aidd --report --since "
                                              "[default: each project's last run]")
@_where
def report(fleet_file: Path, as_json: bool, html: Path | None, since: str | None,
           where: actions.Where) -> int:
    """One morning report across the fleet's projects: their aidd --report here, the server's
    record of runs on other machines (never starts the local server)."""
    if as_json and html is not None:
        raise UsageError("aidd fleet report takes --json or --html FILE, not both")
    return asyncio.run(actions.report(where, load_fleet(fleet_file), as_json, since, html))


@fleet.command(context_settings=_CONTEXT)
@_where
def down(where: actions.Where) -> int:
    """Stop the local Temporal server (its database stays; the next command starts it)."""
    return actions.down(where)


def main(args: Sequence[str]) -> int:
    """Run `aidd fleet ARGS`; Click's usage errors become aidd's (exit 2)."""
    try:
        code = fleet.main(list(args), prog_name="aidd fleet", standalone_mode=False,
                          complete_var="_AIDD_COMPLETE")
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    except click.ClickException as exc:
        raise UsageError(exc.format_message()) from None
    return int(code) if isinstance(code, int) else 0
