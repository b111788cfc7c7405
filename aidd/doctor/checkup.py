"""Which checks `aidd --doctor` runs, in which order (a run's start runs `quick`'s)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from aidd.agents.base import Adapter
from aidd.agents.registry import ADAPTERS
from aidd.clock import Clock
from aidd.config import Settings
from aidd.doctor import agentcheck, configcheck, gitcheck, place
from aidd.doctor.auth import Probe, check_auth
from aidd.doctor.endpoints import check_endpoints
from aidd.doctor.findings import Finding, skip
from aidd.doctor.livecheck import check_liveness
from aidd.doctor.lock import check_lock
from aidd.project.paths import ProjectPaths
from aidd.session.cliproc import probe_version


def run_doctor(settings: Settings, paths: ProjectPaths, clock: Clock) -> list[Finding]:
    adapter = ADAPTERS[settings.cli]
    binary = agentcheck.find_binary(adapter, settings.environ)
    version = probe_version(binary, settings.environ, clock=clock) if binary else None
    machine = [agentcheck.check_cli(adapter, binary, version),
               agentcheck.check_nested(settings.environ),
               agentcheck.check_root(adapter, settings.environ)]
    auth = _auth(settings, adapter, binary, machine, clock)
    root = paths.root
    return [*machine, auth, place.check_disk(root),
            *gitcheck.check_git(settings),
            place.check_project_dir(root), place.check_links(paths),
            place.check_spec(settings, paths), check_lock(paths),
            *configcheck.check_config(settings, paths),
            configcheck.check_copy_lists(settings, paths, settings.home),
            configcheck.check_gate(settings), check_liveness(settings, root),
            *check_endpoints(settings, offline=settings.actions.offline)]


def _auth(settings: Settings, adapter: Adapter, binary: str | None, before: list[Finding],
          clock: Clock) -> Finding:
    if settings.actions.offline:
        return skip("auth", "no test prompt sent (--offline)")
    blocking = [f.name for f in before if f.blocks_run and f.failed]
    if binary is None or blocking:
        return skip("auth", f"no test prompt sent: fix `{blocking[0]}` first" if blocking
                    else "no test prompt sent: no CLI")
    with _probe_dir(settings.project_dir) as cwd:
        return check_auth(settings, Probe(adapter, binary, cwd), clock)


@contextmanager
def _probe_dir(root: Path) -> Iterator[Path]:
    """The project directory (the CLI's project config counts), or, while there is none, a
    scratch directory removed afterwards."""
    if root.is_dir():
        yield root
        return
    with tempfile.TemporaryDirectory(prefix="aidd-doctor-") as scratch:
        yield Path(scratch)
