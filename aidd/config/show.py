"""`aidd --show-config`: each effective setting and where it came from (built-in, the user's
config file, the project's, an AIDD_* variable, a flag), as text or JSON. Secrets are shown as
the warnings show them: a URL without user, password, path or query, a command's first word."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aidd.config import Settings
from aidd.gate.commands import GateCommand
from aidd.notify.targets import Target, shown_url
from aidd.options import OPTIONS, Kind


def show_config(settings: Settings, *, as_json: bool) -> str:
    origins = dict(settings.origins)
    rows = [(opt.name, _value(opt.kind, getattr(settings, opt.attr)),
             origins.get(opt.name, "built-in")) for opt in OPTIONS]
    held = [command.run for command in settings.gate_unapproved]
    if as_json:
        return json.dumps({"settings": [{"name": n, "value": v, "from": o} for n, v, o in rows],
                           "gate_waiting_for_approval": held}, indent=2) + "\n"
    width = max(len(name) for name, _, _ in rows)
    lines = [f"{name:<{width}}  {_text(value)}  ({origin})" for name, value, origin in rows]
    if held:
        lines.append(f"(the project's gate waits for approval and does not run: "
                     f"{'; '.join(held)}; aidd --allow approves it)")
    return "\n".join(lines) + "\n"


def _value(kind: Kind, value: Any) -> Any:
    """A JSON value; what may hold a secret as aidd shows it anywhere."""
    if isinstance(value, tuple):
        return [_value(kind, item) for item in value]
    if isinstance(value, GateCommand):
        return value.run
    if isinstance(value, Target):
        return value.shown()
    if kind is Kind.URL and isinstance(value, str):
        return shown_url(value)
    if isinstance(value, Path):
        return str(value)
    return value


def _text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return ", ".join(_text(item) for item in value) if value else "none"
    return str(value)
