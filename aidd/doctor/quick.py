"""The doctor's checks a run makes before its first attempt, beyond its own preflight: quick
and local (no network, no model call, no git run), so a run starts as fast as before."""

from __future__ import annotations

from aidd.agents.base import Adapter
from aidd.config import Settings
from aidd.doctor import agentcheck, configcheck, place
from aidd.doctor.findings import Finding


def run_start_checks(settings: Settings, adapter: Adapter) -> list[Finding]:
    return [agentcheck.check_nested(settings.environ),
            agentcheck.check_root(adapter, settings.environ),
            place.check_disk(settings.project_dir), configcheck.check_gate(settings)]
