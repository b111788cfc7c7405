"""`aidd --report [--since WHEN] [--json | --html FILE]`: build the report once, then print
it as text or JSON, or write it as one HTML file."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from aidd.clock import Clock
from aidd.console import json_text, print_out
from aidd.errors import ExitCode, NotFoundError
from aidd.fsio import write_atomic
from aidd.project.paths import ProjectPaths
from aidd.reports.morning.build import build_report
from aidd.reports.morning.jsonform import report_json
from aidd.reports.morning.text import render_text


def print_report(paths: ProjectPaths, environ: Mapping[str, str], clock: Clock, *,
                 since: str | None, as_json: bool, html: Path | None) -> int:
    report = build_report(paths, since, clock.now(), environ)
    if html is not None:
        from aidd.reports.morning.html import render_html  # only --html needs it

        _write_html(paths, html, render_html(report))
        print_out(f"report written to {html}\n")
    elif as_json:
        print_out(json_text(report_json(report)))
    else:
        print_out(render_text(report))
    return int(ExitCode.SUCCESS)


def _write_html(paths: ProjectPaths, target: Path, page: str) -> None:
    """Atomically, and never through a link the project planted: a path inside the project
    is walked from its root without following links (fsio); elsewhere the directory is the
    user's own choice."""
    target = Path(os.path.normpath(target.absolute()))
    root = Path(os.path.normpath(paths.root.absolute()))
    if not target.parent.is_dir():
        raise NotFoundError(f"--html: directory {target.parent} does not exist")
    try:
        write_atomic(target, page, root=root if target.is_relative_to(root) else target.parent)
    except OSError as exc:  # a planted link or FIFO included (UnsafePathError)
        raise NotFoundError(f"--html: cannot write {target}: {exc}") from None
