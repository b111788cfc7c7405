"""`aidd watch [--project-dir P]`: its own small Click command (cli.main dispatches to it before
aidd's, as for `aidd fleet`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

import click

from aidd.clock import SystemClock
from aidd.config import color_wanted
from aidd.errors import ExitCode, NotFoundError, UsageError
from aidd.project.paths import ProjectPaths
from aidd.watch.source import Source
from aidd.watch.terminal import is_terminal, print_once, watch


@click.command("aidd watch", context_settings={"help_option_names": ["-h", "--help"]},
               help="A read-only live view of the project's run (or its last one): q quits, "
                    "s asks the run to stop (after a y/n), r writes the morning report to "
                    ".automaker/morning-report.html. Not on a terminal: one frame, then exit.")
@click.option("--project-dir", "-C", type=click.Path(file_okay=False, path_type=Path),
              default=Path(), show_default=True, help="the project to watch")
def _command(project_dir: Path) -> None:
    paths = ProjectPaths(project_dir.absolute())
    if not paths.automaker.is_dir():
        raise NotFoundError(f"{paths.automaker} does not exist: no aidd run to watch there")
    source, clock = Source(paths), SystemClock()
    if not is_terminal():
        print_once(source, clock)
        return
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C leaves like q
        watch(source, clock, color_wanted("auto", True), os.environ)


def main(args: Sequence[str]) -> int:
    try:
        _command.main(list(args), prog_name="aidd watch", standalone_mode=False)
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    except click.ClickException as exc:
        raise UsageError(exc.format_message()) from None
    return int(ExitCode.SUCCESS)
