"""Notification targets as configured (`notify:` in the user's config, `--notify TYPE:TARGET`,
`--notify-webhook URL`, `--notify-command CMD`), and how a URL or command may be shown.

Light on purpose: the flag table imports it for every start, `--help` included."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from enum import Enum, unique
from typing import Any
from urllib.parse import urlsplit

from aidd.console import program_of, shell_line


@unique
class Trigger(Enum):
    """What a target can be told about: the names of its `events:`."""

    RUN_END = "run_end"  # the run ended, for any reason
    COMPLETED = "completed"  # completion confirmed (exit 73 follows, or the audits)
    STUCK = "stuck"
    BUDGET_EXHAUSTED = "budget_exhausted"
    QUIT_ON_ABORT = "quit_on_abort"
    PAUSE = "pause"  # a rate-limit or pacing pause longer than `min_pause_minutes`
    GATE_RED = "gate_red"  # the gate red after `gate_red_attempts` attempts in a row
    IDLE_KILL = "idle_kill"  # an agent killed after its idle timeout, or as hung (--max-nudges)


@unique
class TargetKind(Enum):
    WEBHOOK = "webhook"  # a JSON POST of the event
    NTFY = "ntfy"  # an ntfy topic URL: title and message
    COMMAND = "command"  # /bin/sh -c CMD, the event as JSON on stdin
    DESKTOP = "desktop"  # notify-send


MIN_PAUSE_MINUTES = 30
GATE_RED_ATTEMPTS = 3
_URL_MAX = 2048
_COMMAND_MAX = 4096
_KEYS = ("type", "url", "command", "events", "min_pause_minutes", "gate_red_attempts")
_UNSAFE = re.compile(r"[\x00-\x20\x7f]")


@dataclass(frozen=True)
class Target:
    """One place to notify. The URL and command stay out of `repr`: they may hold secrets."""

    kind: TargetKind
    url: str | None = field(default=None, repr=False)
    command: str | None = field(default=None, repr=False)
    events: frozenset[Trigger] = frozenset(Trigger)
    min_pause_minutes: int = MIN_PAUSE_MINUTES
    gate_red_attempts: int = GATE_RED_ATTEMPTS

    def shown(self) -> str:
        """The target as a warning or an event names it."""
        if self.command is not None:
            return f"command {shown_command(self.command)}"
        if self.url is not None:
            return f"{self.kind.value} {shown_url(self.url)}"
        return self.kind.value


class NotifyConfigError(ValueError):
    """A target that cannot be used; the caller says where it came from. The message never
    quotes a URL or a command: either may hold a secret."""


def shown_url(url: str) -> str:
    """`scheme://host[:port]/…`: no user, password, path or query, where tokens live."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    host = f"[{host}]" if ":" in host else host
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}/…"


def shown_command(command: str) -> str:
    """Its program as written (`shell_line`), then `…` for the rest: arguments and a leading
    `VAR=value` may carry a token (`curl -H 'Authorization: …'`, `TOKEN=… notify.sh`)."""
    try:
        program, words = program_of(command), len(shlex.split(command))
    except ValueError:  # quotes that do not close: /bin/sh will say so when it runs
        program, words = None, 2
    if program is None:
        return "? …"
    return shell_line([program]) + (" …" if words > 1 else "")


def check_url(raw: Any) -> str:
    """An absolute http(s) URL with a host, as given."""
    if not isinstance(raw, str) or not raw or len(raw) > _URL_MAX or _UNSAFE.search(raw):
        raise NotifyConfigError(f"must be an http(s) URL of at most {_URL_MAX} characters "
                                "without spaces or control characters")
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise NotifyConfigError("must be an http:// or https:// URL with a host")
    try:
        _ = parts.port
    except ValueError:
        raise NotifyConfigError("has an invalid port") from None
    return raw


def parse_notify(raw: Any, kind: TargetKind | None = None) -> tuple[Target, ...]:
    """Targets from a list (one item alone is a list of one). With `kind` (the flags
    `--notify-webhook` and `--notify-command`) each item is that target's URL or command;
    otherwise an item is `TYPE:URL_OR_COMMAND`, `desktop`, or a mapping with `type`."""
    items = list(raw) if isinstance(raw, list | tuple) else [raw]
    return tuple(_entry(item, index, kind) for index, item in enumerate(items, 1))


def _entry(item: Any, index: int, kind: TargetKind | None) -> Target:
    try:
        if kind is not None:
            return _target({"type": kind.value, _address_key(kind): item})
        if isinstance(item, str):
            name, _, rest = item.partition(":")
            found = _kind(name.strip())
            return _target({"type": found.value, _address_key(found): rest} if rest
                           else {"type": found.value})
        if isinstance(item, dict):
            return _target(item)
        raise NotifyConfigError("must be TYPE:URL_OR_COMMAND, 'desktop' or a mapping with "
                                "'type'")
    except NotifyConfigError as exc:
        raise NotifyConfigError(f"entry {index}: {exc}") from None


def _address_key(kind: TargetKind) -> str:
    return "command" if kind is TargetKind.COMMAND else "url"


def _kind(value: Any) -> TargetKind:
    try:
        return TargetKind(value)
    except ValueError:
        known = ", ".join(k.value for k in TargetKind)
        raise NotifyConfigError(f"type must be one of {known}") from None


def _target(item: dict[Any, Any]) -> Target:
    data = {str(k).replace("-", "_"): v for k, v in item.items()}
    unknown = [k for k in data if k not in _KEYS]
    if unknown:
        raise NotifyConfigError(f"unknown key {unknown[0]!r} (known: {', '.join(_KEYS)})")
    kind = _kind(data.get("type"))
    url = command = None
    if kind in (TargetKind.WEBHOOK, TargetKind.NTFY):
        url = check_url(data.get("url"))
    elif kind is TargetKind.COMMAND:
        command = _command(data.get("command"))
    takes = None if kind is TargetKind.DESKTOP else _address_key(kind)
    for key in ("url", "command"):
        if key in data and key != takes:
            raise NotifyConfigError(f"a {kind.value} target takes no '{key}'")
    return Target(kind, url, command, _events(data.get("events")),
                  _whole(data.get("min_pause_minutes", MIN_PAUSE_MINUTES), "min_pause_minutes",
                         0, 10080),
                  _whole(data.get("gate_red_attempts", GATE_RED_ATTEMPTS), "gate_red_attempts",
                         1, 1000))


def _command(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise NotifyConfigError("needs 'command', a command line")
    if "\0" in value or len(value) > _COMMAND_MAX:
        raise NotifyConfigError(f"'command' must be text without NUL, at most {_COMMAND_MAX} "
                                "characters")
    return value.strip()


def _events(value: Any) -> frozenset[Trigger]:
    if value is None:
        return frozenset(Trigger)
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple):
        raise NotifyConfigError("'events' must be a list of event names")
    names = [str(i).strip() for i in items if str(i).strip()]
    if not names:
        raise NotifyConfigError("'events' names no event")
    known = {t.value: t for t in Trigger}
    for name in names:
        if name not in known:
            raise NotifyConfigError(f"unknown event {name[:40]!r} (known: {', '.join(known)})")
    return frozenset(known[n] for n in names)


def _whole(value: Any, key: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise NotifyConfigError(f"'{key}' must be a whole number from {low} to {high}")
    return value


_SECRET_FLAGS = ("--notify", "--notify-webhook", "--notify-command", "--heartbeat-url")


def redact_argv(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The command line as aidd may record it (the lock file): the value of each notification
    or heartbeat flag shown as `shown_url` or `shown_command` show it."""
    out: list[str] = []
    flag = None
    for arg in argv:
        name, eq, value = arg.partition("=")
        if flag is not None:
            out.append(_redacted(flag, arg))
            flag = None
        elif name in _SECRET_FLAGS and eq:
            out.append(f"{name}={_redacted(name, value)}")
        else:
            out.append(arg)
            flag = arg if arg in _SECRET_FLAGS else None
    return tuple(out)


def _redacted(flag: str, value: str) -> str:
    if flag == "--notify-command":
        return shown_command(value)
    if flag != "--notify":
        return shown_url(value)
    kind, colon, rest = value.partition(":")
    if not colon:
        return value  # `desktop`
    return f"{kind}:{shown_command(rest) if kind == 'command' else shown_url(rest)}"
