"""The flag table: one record per option, shared by Click, config files and AIDD_* vars, each
value checked by `convert` whatever its source (CLI-1..5, CLI-32..34)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum, unique
from pathlib import Path
from typing import Any

from aidd.agents.registry import ADAPTERS
from aidd.audits.names import is_audit_name
from aidd.clock import parse_duration
from aidd.errors import shown
from aidd.gate.commands import GateConfigError, parse_gate
from aidd.notify.targets import NotifyConfigError, TargetKind, check_url, parse_notify


@unique
class Kind(Enum):
    INT = "N"
    SECONDS = "SECONDS"
    TEXT = "TEXT"
    MODEL = "M"
    CLI = "CLI"
    PATH = "PATH"
    NAME = "NAME"
    SWITCH = "switch"
    LIST = "A[,B…]"
    GATE = "CMD"
    DURATION = "DURATION"
    AMOUNT = "USD"
    PERCENT = "PCT"
    NOTIFY = "TARGET"
    URL = "URL"
    CHOICE = "WORD"


@dataclass(frozen=True)
class Option:
    name: str
    kind: Kind
    default: Any
    group: str
    help: str
    configurable: bool = True
    minimum: int = 0
    metavar: str | None = None  # the flag's value in --help, when not the kind's
    choices: tuple[str, ...] = ()  # a CHOICE's words, the first the default

    @property
    def attr(self) -> str:
        return self.name.replace("-", "_")

    @property
    def env(self) -> str:
        return "AIDD_" + self.attr.upper()

    @property
    def flag(self) -> str:
        return "--" + self.name


class OptionValueError(ValueError):
    """A bad value; the caller adds where it came from (flag, file and key, variable)."""


CLI_NAMES = tuple(ADAPTERS)  # the registry is the one list of CLIs
INT_MAX = 2**31 - 1
_INT_RE = re.compile(r"[0-9]+")
_MODEL_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@+=\[\]-]{0,199}")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}

_P, _M, _A, _F, _L, _S, _G = (
    "Project and agent",
    "Modes",
    "Audits",
    "Filters",
    "Limits and supervision",
    "Checkpoints and the validation gate",
    "Logs",
)
_B = "Budgets and pacing"
_N = "Notifications and heartbeat (your own config, flags and variables only)"
OPTIONS: tuple[Option, ...] = (
    Option("project-dir", Kind.PATH, ".", _P, "project directory (created when missing)"),
    Option("spec", Kind.PATH, None, _P, "spec file, needed for a new project"),
    Option("cli", Kind.CLI, CLI_NAMES[0], _P,
           f"agent CLI: {', '.join(CLI_NAMES[:-1])} or {CLI_NAMES[-1]}"),
    Option("model", Kind.MODEL, None, _P, "base model (default: the CLI's own)"),
    Option("init-model", Kind.MODEL, None, _P, "model for initializer/onboarding/todo/validate/"
           "in-progress (default: --model)"),
    Option("code-model", Kind.MODEL, None, _P, "model for coding and directive (default: --model)"),
    Option("audit-model", Kind.MODEL, None, _P, "model for audits (default: the code model)"),
    Option("parallel", Kind.INT, 1, _P, "work up to N features at once, each by its own agent in "
           "its own git worktree, merged through a gated queue (needs a git project)",
           minimum=1),
    Option("worktree-dir", Kind.PATH, None, _P, "where --parallel's worktrees live (default: "
           "the user's data directory; never inside the project)"),
    Option("prompt", Kind.TEXT, None, _M, "directive mode: send TEXT verbatim (beats other modes)"),
    Option("todo", Kind.SWITCH, False, _M, "TODO mode: work through .automaker/todo.md"),
    Option("validate", Kind.SWITCH, False, _M, "validate mode: re-verify passing features"),
    Option("in-progress", Kind.SWITCH, False, _M, "work only on features with status in_progress"),
    Option("stop-when-done", Kind.SWITCH, True, _M, "end TODO and in-progress modes when done"),
    Option("audit", Kind.LIST, (), _A, "run these audits (comma-separated, repeatable)"),
    Option("audit-all", Kind.SWITCH, False, _A, "run every runnable audit"),
    Option("audit-on-completion", Kind.LIST, (), _A, "audits to run once the project is complete"),
    Option("code-after-audit", Kind.SWITCH, False, _A, "fix findings, re-audit (max 10 cycles)"),
    Option("filter-by", Kind.NAME, None, _F, "feature field to filter on (with --filter)"),
    Option("filter", Kind.TEXT, None, _F, "value the --filter-by field must have"),
    Option("milestone", Kind.NAME, None, _F, "only features of this roadmap.json milestone"),
    Option("feature", Kind.NAME, None, _F, "focus on one feature (dir name, id or substring)"),
    Option("max-iterations", Kind.INT, None, _L, "attempts per phase (default: unlimited)"),
    Option("timeout", Kind.SECONDS, 3600, _L, "wall-clock limit per attempt, 0 = none"),
    Option("idle-timeout", Kind.SECONDS, 900, _L, "kill after this much silence, 0 = never"),
    Option("idle-nudge-timeout", Kind.SECONDS, 300, _L, "nudge after this much silence, 0 = never"),
    Option("max-nudges", Kind.INT, 3, _L, "kill as hung (71) at the next nudge due after N "
           "nudges answered by no tool call and no file change, 0 = no cap"),
    Option("liveness", Kind.CHOICE, "signals", _L, "judge a silent agent by its tool calls, CPU "
           "and file changes (signals), or by its output alone (output)",
           choices=("signals", "output"), metavar="signals|output"),
    Option("busy-timeout", Kind.SECONDS, None, _L, "a silent agent that is busy counts as hung "
           "after this long (default: --timeout; 0 = only --timeout ends it)"),
    Option("max-attempts-per-feature", Kind.INT, 3, _L, "set a feature aside for the night "
           "(failed) after N of its attempts ended the same way, 0 = never"),
    Option("quit-on-abort", Kind.INT, 0, _L, "exit after N consecutive failures, 0 = never"),
    Option("continue-on-timeout", Kind.SWITCH, False, _L, "a 124 result is not a failure"),
    Option("keep-children", Kind.SWITCH, False, _L, "leave the agent's leftover processes running"),
    Option("trust-project-config", Kind.SWITCH, False, _L, "let the project's .automaker/aidd.yaml "
           "loosen supervision and name files outside the project (never from that file)"),
    Option("rate-limit-buffer", Kind.SECONDS, 60, _L, "seconds added to a parsed reset time"),
    Option("rate-limit-fallback", Kind.SECONDS, 300, _L, "sleep when no reset time parses",
           minimum=1),
    Option("rate-limit-max-sleep", Kind.DURATION, 21600, _L, "the longest rate-limit sleep or "
           "--pace-at pause, whatever reset the CLI reports (6h, 90m or seconds)", minimum=1),
    Option("max-wall-time", Kind.DURATION, None, _B, "end the run with 9 after this long "
           "(8h, 90m, 1h30m or seconds), stopping an attempt in flight; 0 = none"),
    Option("max-tokens", Kind.INT, None, _B, "end the run with 9 once its attempts used this "
           "many tokens (all kinds summed); 0 = none"),
    Option("max-cost-usd", Kind.AMOUNT, None, _B, "end the run with 9 once its attempts cost "
           "this much (reported by the CLI, else estimated); 0 = none"),
    Option("daily-max-cost-usd", Kind.AMOUNT, None, _B, "end the run with 9 once today's cost "
           "in this project, over all runs, reaches this; 0 = none"),
    Option("daily-max-tokens", Kind.INT, None, _B, "end the run with 9 once today's tokens in "
           "this project, over all runs, reach this; 0 = none"),
    Option("pace-at", Kind.PERCENT, None, _B, "pause before the next attempt, until the window "
           "resets, once the CLI reports this percent of a quota window used (claude); 0 = off"),
    Option("no-checkpoints", Kind.SWITCH, False, _S, "record no git checkpoint of the work tree "
           "before, during and after each attempt"),
    Option("checkpoint-keep-runs", Kind.INT, 20, _S, "keep the checkpoints of this many runs "
           "(the newest); older runs' are pruned at start", minimum=1),
    Option("gate", Kind.GATE, (), _S, "a check aidd runs in the project after each successful "
           "attempt and before completion; only failures new since the run's start block "
           "(repeatable; config: a list of {name, run, timeout, junit})"),
    Option("gate-revert-passes", Kind.SWITCH, False, _S, "set a feature back to passes: false "
           "when the attempt that passed it left the gate red"),
    Option("notify", Kind.NOTIFY, (), _N, "tell TYPE:URL_OR_COMMAND (ntfy:URL, webhook:URL, "
           "command:CMD or desktop) when the run ends, is stuck, pauses long, its gate stays "
           "red... (repeatable; config: a list of {type, url|command, events, "
           "min_pause_minutes, gate_red_attempts})", metavar="TYPE:TARGET"),
    Option("notify-webhook", Kind.NOTIFY, (), _N, "POST each notification as JSON to URL "
           "(repeatable)", metavar="URL"),
    Option("notify-command", Kind.NOTIFY, (), _N, "run CMD with /bin/sh for each notification, "
           "its JSON on stdin (repeatable)", metavar="CMD"),
    Option("heartbeat-url", Kind.URL, None, _N, "dead-man's switch: GET URL/start, then URL "
           "every --heartbeat-interval, URL/<exit code> at the end (URL/fail for a failed run "
           "that exits 0)"),
    Option("heartbeat-interval", Kind.SECONDS, 300, _N, "seconds between heartbeat pings",
           minimum=1),
    Option("strict-exit", Kind.SWITCH, False, _N, "a run whose health verdict is failed (stuck, "
           "most attempts failed...) exits 10 instead of 0, for a scheduler"),
    Option("no-clean", Kind.SWITCH, False, _G, "leave this run's logs raw"),
    Option("extract-structured", Kind.SWITCH, False, _G, "write iterations/NNN.json per attempt"),
    Option("color", Kind.CHOICE, "auto", _G, "colour on the console: auto (on a terminal, unless "
           "NO_COLOR is set), always or never", choices=("auto", "always", "never"),
           metavar="auto|always|never"),
    Option("console", Kind.CHOICE, "bash", _G, "the run's console: bash (the banner before "
           "every attempt, as the bash script) or compact (the banner once, one line per "
           "attempt, and a status line kept at the bottom of a terminal)",
           choices=("bash", "compact"), metavar="bash|compact"),
)
BY_NAME = {opt.name: opt for opt in OPTIONS}


def convert(opt: Option, raw: Any, base: Path | None = None) -> Any:
    """Check and normalise one value of `opt`; `base` resolves relative paths (CLI-35)."""
    if raw is None:
        return None
    return _CONVERTERS[opt.kind](opt, raw, base)


def _int(opt: Option, raw: Any, _base: Path | None) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        raise OptionValueError(f"expected a whole number, got {shown(raw)}")
    text = str(raw)
    if not _INT_RE.fullmatch(text) or int(text) > INT_MAX:
        raise OptionValueError(f"{shown(text)} is not a whole number between 0 and {INT_MAX}")
    if int(text) < opt.minimum:
        raise OptionValueError(f"must be at least {opt.minimum}, got {text}")
    return int(text)


def _choice(opt: Option, raw: Any, _base: Path | None) -> str:
    if raw not in opt.choices:
        raise OptionValueError(f"{shown(raw)} is not one of {', '.join(opt.choices)}")
    return str(raw)


def _text(opt: Option, raw: Any, _base: Path | None) -> str | None:
    if not isinstance(raw, str):
        raise OptionValueError(f"expected text, got {shown(raw)}")
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raise OptionValueError("is not valid UTF-8") from None
    if opt.name == "prompt" and not raw.strip():
        return None
    return raw


def _model(opt: Option, raw: Any, _base: Path | None) -> str:
    if not isinstance(raw, str) or not _MODEL_RE.fullmatch(raw):
        raise OptionValueError(f"{shown(raw)} is not a valid model name")
    return raw


def _cli(opt: Option, raw: Any, _base: Path | None) -> str:
    if raw == "zrun":
        raise OptionValueError("zrun is not supported by aidd")
    if raw not in CLI_NAMES:
        raise OptionValueError(f"{shown(raw)} is not one of {', '.join(CLI_NAMES)}")
    return str(raw)


def _path(opt: Option, raw: Any, base: Path | None) -> Path:
    if not isinstance(raw, str) or not raw or "\0" in raw:
        raise OptionValueError(f"{shown(raw)} is not a path")
    path = Path(raw).expanduser()
    if not path.is_absolute() and base is not None:
        path = base / path
    return path


def _name(opt: Option, raw: Any, _base: Path | None) -> str:
    if not isinstance(raw, str | int) or isinstance(raw, bool) or not str(raw):
        raise OptionValueError(f"expected a name, got {shown(raw)}")
    text = str(raw)
    if opt.name == "feature" and ("/" in text or "\0" in text or text in (".", "..")):
        raise OptionValueError(f"{shown(text)} must be one path component (no '/', '..' or NUL)")
    return text


def _switch(opt: Option, raw: Any, _base: Path | None) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise OptionValueError(f"{shown(raw)} is not a boolean (true/false, yes/no, on/off, 1/0)")


def _list(opt: Option, raw: Any, _base: Path | None) -> tuple[str, ...]:
    items = raw if isinstance(raw, list | tuple) else [raw]
    names: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise OptionValueError(f"expected audit names, got {item!r}")
        names.extend(part.strip() for part in item.split(","))
    out = [n.removesuffix(".md") for n in names if n]
    if not out:
        raise OptionValueError("names no audit")
    for name in out:
        if not is_audit_name(name):
            raise OptionValueError(f"{name!r} is not a valid audit name (letters, '_' or '-')")
    return tuple(dict.fromkeys(out))


def _gate(opt: Option, raw: Any, _base: Path | None) -> tuple[Any, ...]:
    if raw in ("", []):  # `AIDD_GATE=` or `gate: []`: no gate
        return ()
    try:
        return parse_gate(raw)
    except GateConfigError as exc:
        raise OptionValueError(str(exc)) from None


_AMOUNT_RE = re.compile(r"[0-9]+(?:\.[0-9]+)?")
AMOUNT_MAX = 1e9  # dollars; more is a typo, not a budget


def _duration(opt: Option, raw: Any, _base: Path | None) -> int:
    """Seconds, from `8h`, `90m`, `1h30m`, `45s`, `2d` or a bare number of seconds."""
    text = str(raw) if isinstance(raw, int | str) and not isinstance(raw, bool) else ""
    total = parse_duration(text)
    if total is None:
        raise OptionValueError(f"{shown(raw)} is not a duration (e.g. 8h, 90m, 1h30m or seconds)")
    if total > INT_MAX:
        raise OptionValueError(f"{shown(raw)} is longer than {INT_MAX} seconds")
    if total < opt.minimum:
        raise OptionValueError(f"must be at least {opt.minimum} seconds, got {shown(raw)}")
    return total


def _amount(opt: Option, raw: Any, _base: Path | None) -> float:
    """Dollars: a whole or decimal number, at least 0 (YAML may already give a number)."""
    text = str(raw).strip() if isinstance(raw, int | float | str) else ""
    if isinstance(raw, bool) or not _AMOUNT_RE.fullmatch(text) or float(text) > AMOUNT_MAX:
        raise OptionValueError(f"{shown(raw)} is not an amount in USD between 0 and "
                               f"{AMOUNT_MAX:.0f} (e.g. 5 or 2.50)")
    return float(text)


def _percent(opt: Option, raw: Any, _base: Path | None) -> int:
    text = str(raw).strip().removesuffix("%") if isinstance(raw, int | str) else ""
    if isinstance(raw, bool) or not _INT_RE.fullmatch(text) or int(text) > 100:
        raise OptionValueError(f"{shown(raw)} is not a percentage (a whole number 0-100)")
    return int(text)


_NOTIFY_KINDS = {"notify-webhook": TargetKind.WEBHOOK, "notify-command": TargetKind.COMMAND}


def _notify(opt: Option, raw: Any, _base: Path | None) -> tuple[Any, ...]:
    if raw in ("", []):  # `AIDD_NOTIFY=` or `notify: []`: no target
        return ()
    try:
        return parse_notify(raw, _NOTIFY_KINDS.get(opt.name))
    except NotifyConfigError as exc:
        raise OptionValueError(str(exc)) from None


def _url(opt: Option, raw: Any, _base: Path | None) -> str:
    try:
        return check_url(raw)
    except NotifyConfigError as exc:
        raise OptionValueError(str(exc)) from None


_CONVERTERS = {
    Kind.INT: _int,
    Kind.SECONDS: _int,
    Kind.TEXT: _text,
    Kind.MODEL: _model,
    Kind.CLI: _cli,
    Kind.PATH: _path,
    Kind.NAME: _name,
    Kind.SWITCH: _switch,
    Kind.LIST: _list,
    Kind.GATE: _gate,
    Kind.DURATION: _duration,
    Kind.AMOUNT: _amount,
    Kind.PERCENT: _percent,
    Kind.NOTIFY: _notify,
    Kind.URL: _url,
    Kind.CHOICE: _choice,
}
