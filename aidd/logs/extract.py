"""Structured extraction of one attempt's log into `<log base>.json` (LOG-30..33); works on raw
and on cleaned logs."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aidd.agents.registry import ADAPTERS
from aidd.agents.toolcalls import Call, EventReader, ToolKind, classify_error
from aidd.errors import ExitCode, NotFoundError, result_key
from aidd.fsio import open_read, read_file, write_atomic
from aidd.logs.cleaning import clean_bytes
from aidd.project import limits

# Tool calls, results, tokens and cost come from the raw JSON events in the log (claude stream-json;
# opencode/kilo `--format json`); text patterns are a fallback for non-JSON lines only. Rendered
# `» ` lines are skipped (they repeat the events).
#
# aidd's own lines read here (all optional, matched case-insensitively, extra text ignored):
#
#     [aidd] Iteration <i>[ of <N>] ... (log <NNN>)       iterationNumber = NNN (else the file name)
#     [aidd] Prompt: <kind> ...                           promptType (fallback, see next line)
#     [aidd HH:MM:SS] Sending <kind> prompt to <CLI> ...  promptType (preferred)
#     [aidd] CLI: <opencode|kilocode|claude-code> ...     cli (also `kilo`, `claude`, `Claude Code`;
#                                                         else the trailer's name, else the events)
#     [aidd] Project: <dir>                               paths under <dir> become relative
#     [aidd] Started: <ISO 8601>                          timestamps.start
#     [aidd] Finished: <ISO 8601>                         timestamps.end
#     [aidd] <CLI name> finished: result <code> (<outcome>, <reason>) after <Xh Ym Zs>
#                                                         outcome; duration when no start/end
#     [aidd HH:MM:SS] ... <n> consecutive failure(s) ...  outcome.failureCount
#     [aidd HH:MM:SS] ERROR <message>                     errors (type from the message)
#
# Without a `Project:` line, a log at `<dir>/.automaker/iterations/NNN.log` implies `<dir>`.

VERSION = "1.0"
_ITERATION = re.compile(r"^\[aidd\] iteration\b.*?\blog (\d+)", re.I)
_PROMPT = re.compile(r"^\[aidd\] prompt(?: kind)?: *([\w-]+)", re.I)
_SENDING = re.compile(r"^\[aidd [\d:]+\] sending ([\w-]+) prompt to", re.I)
_CLI = re.compile(r"^\[aidd\] cli: *([\w-]+)", re.I)
_PROJECT = re.compile(r"^\[aidd\] project(?: dir)?: *(.+?)\s*$", re.I)
_STARTED = re.compile(r"^\[aidd\] started: *(\S+)", re.I)
_FINISHED = re.compile(r"^\[aidd\] finished: *(\S+)", re.I)
_TRAILER = re.compile(
    r"^\[aidd\] (\S.*?) finished: result (-?\d+)"
    r"(?: \((\w+)(?:, (\w+))?\))?(?: after (.+?))?\s*$",
    re.I,
)
_CONSECUTIVE = re.compile(r"(\d+) consecutive failures?|consecutive failures?:? *(\d+)", re.I)
_AIDD_ERROR = re.compile(r"^\[aidd [\d:]+\] ERROR (.+)$")
_DURATION = re.compile(r"^(?:(\d+)h)? *(?:(\d+)m)? *(?:(\d+(?:\.\d+)?)s)?$")
_FEATURE = re.compile(r"\.automaker/features/(?:[^\s\"'/\\]+/)*?([^\s\"'/\\]+)/feature\.json")
_ERROR_TEXT = re.compile(
    r"\b(?:error|failed|fatal|exception|traceback)\b|permission denied|\bEACCES\b", re.I
)
_TEXT_TOOL = re.compile(
    r"^\s*[|│]\s+(Read|Write|Edit|Bash|Patch|List|Glob|Grep|WebFetch|Todo\w*)\s+([^|\s].*?)\s*$"
)
_STATUS_BY_REASON = {
    "idle_timeout": "idle_timeout",
    "wall_timeout": "timeout",
    "no_assistant": "no_assistant",
    "provider_error": "provider_error",
    "rate_limited": "rate_limited",
    "fatal": "fatal",
    "no_work": "no_work",
    "context_exhausted": "context_exhausted",
}
_MAX_ERRORS = 500


class _Header:
    """What aidd's own lines say about the attempt."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.trailer: re.Match[str] | None = None
        self.failure_count: int | None = None
        self.errors: list[dict[str, Any]] = []

    def line(self, number: int, text: str) -> None:
        for key, pattern in (
            ("iteration", _ITERATION),
            ("prompt", _PROMPT),
            ("sending", _SENDING),
            ("cli", _CLI),
            ("project", _PROJECT),
            ("start", _STARTED),
            ("end", _FINISHED),
        ):
            match = pattern.match(text)
            if match and key not in self.values:
                self.values[key] = match.group(1)
        if trailer := _TRAILER.match(text):
            self.trailer = trailer
            if trailer.group(4) in ("idle_timeout", "wall_timeout"):
                self._error("timeout", text, number)
        if count := _CONSECUTIVE.search(text):
            self.failure_count = int(count.group(1) or count.group(2))
        if error := _AIDD_ERROR.match(text):
            self._error(classify_error(error.group(1)), error.group(1), number)

    def _error(self, kind: str, message: str, number: int) -> None:
        self.errors.append({"type": kind, "message": message[:500], "lineNumber": number})


def _project_dir(log_path: Path, header: _Header) -> Path | None:
    if "project" in header.values:
        return Path(header.values["project"])
    parents = log_path.absolute().parents
    if len(parents) >= 3 and parents[0].name == "iterations" and parents[1].name == ".automaker":
        return parents[2]
    return None


def extract_log(log_path: Path, failure_count: int | None = None, *,
                root: Path | None = None) -> dict[str, Any]:
    """The structured record of one log (LOG-32). Raises OSError when the log cannot be read
    (a FIFO or a link out of `root`, the project, default the log's directory, included).

    `failure_count` (the run's consecutive failures) beats what the log says.
    """
    header = _Header()
    events = EventReader()
    mention: re.Match[str] | None = None
    text_errors: list[dict[str, Any]] = []
    with open_read(root or log_path.parent, log_path) as fh:
        for number, raw in enumerate(fh, 1):
            line = raw.rstrip(b"\r\n")
            if line.startswith(b"[aidd"):
                header.line(number, line.decode("utf-8", "replace"))
                continue
            if line.startswith("» ".encode()):
                continue
            text = _event_or_text(number, line, events)
            if text is None:
                if mention is None:
                    mention = _FEATURE.search(line.decode("utf-8", "replace"))
                continue
            mention = mention or _FEATURE.search(text)
            _text_line(number, text, events, text_errors)
    if failure_count is not None:
        header.failure_count = failure_count
    return _record(log_path, header, events, mention, text_errors)


def _event_or_text(number: int, line: bytes, events: EventReader) -> str | None:
    """Feed a JSON event to `events` (None), or return the line as cleaned text."""
    stripped = line.strip()
    if stripped.startswith(b"{"):
        try:
            obj = json.loads(stripped)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            events.event(number, obj)
            return None
    return clean_bytes(line).decode("utf-8", "replace").strip()


def _text_line(number: int, text: str, events: EventReader, errors: list[dict[str, Any]]) -> None:
    if tool := _TEXT_TOOL.match(text):
        events.text_call(number, tool.group(1), tool.group(2))
    elif _ERROR_TEXT.search(text) and len(errors) < _MAX_ERRORS:
        errors.append({"type": classify_error(text), "message": text[:500], "lineNumber": number})


def _record(
    log_path: Path,
    header: _Header,
    events: EventReader,
    mention: re.Match[str] | None,
    text_errors: list[dict[str, Any]],
) -> dict[str, Any]:
    project = _project_dir(log_path, header)
    calls = [call.relative_to(project) for call in events.calls]
    slug, description = _feature(calls, mention, project)
    errors = (events.errors + text_errors + header.errors)[:_MAX_ERRORS]
    errors.sort(key=lambda e: int(e["lineNumber"]))
    return {
        "version": VERSION,
        "iterationNumber": _iteration_number(log_path, header),
        "featureSlug": slug,
        "featureDescription": description,
        "cli": _cli(header, events),
        "promptType": header.values.get("sending", header.values.get("prompt")),
        "timestamps": _timestamps(header, events),
        "toolCalls": [{"tool": c.tool, "target": c.target, "lineNumber": c.line} for c in calls],
        "filesModified": _targets(calls, ToolKind.EDIT),
        "filesRead": _targets(calls, ToolKind.READ),
        "filesCreated": _targets(calls, ToolKind.WRITE),
        "commands": [
            {"command": c.target, "lineNumber": c.line, "exitCode": c.exit_code}
            for c in calls
            if c.kind is ToolKind.SHELL
        ],
        "outcome": _outcome(log_path, header),
        "errors": errors,
        "summary": _summary(calls, errors),
        "tokens": events.tokens(),
        "costUsd": events.cost(),
    }


def _iteration_number(log_path: Path, header: _Header) -> int | None:
    if "iteration" in header.values:
        return int(header.values["iteration"])
    digits = re.match(r"\d+", log_path.name)
    return int(digits.group(0)) if digits else None


def _cli(header: _Header, events: EventReader) -> dict[str, str] | None:
    named = header.values.get("cli") or (header.trailer.group(1) if header.trailer else None)
    kind = _cli_aliases().get(_squeezed(named or "")) or events.cli_hint or ""
    return {"type": kind, "name": ADAPTERS[kind].display_name} if kind in ADAPTERS else None


def _squeezed(name: str) -> str:
    return re.sub(r"[\s_-]", "", name.lower())


def _cli_aliases() -> dict[str, str]:
    """Every way a log names a CLI (its --cli value, binary or display name) -> --cli value."""
    return {_squeezed(form): name for name, adapter in ADAPTERS.items()
            for form in (name, adapter.binary, adapter.display_name)}


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _timestamps(header: _Header, events: EventReader) -> dict[str, Any]:
    start_text = header.values.get("start") or _iso(events.first_s)
    end_text = header.values.get("end") or _iso(events.last_s)
    start, end = _parse_time(start_text), _parse_time(end_text)
    duration: float | None = None
    if start and end and (start.tzinfo is None) == (end.tzinfo is None):
        duration = (end - start).total_seconds()
    elif header.trailer and header.trailer.group(5):
        duration = _parse_duration(header.trailer.group(5))
    if duration is None and events.duration_ms is not None:
        duration = events.duration_ms / 1000
    return {
        "start": start_text,
        "end": end_text,
        "durationSeconds": None if duration is None else round(duration, 3),
    }


def _iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")


def _parse_duration(text: str) -> float | None:
    match = _DURATION.match(text.strip())
    if not match or not any(match.groups()):
        return None
    hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    return hours * 3600 + minutes * 60 + seconds


def _outcome(log_path: Path, header: _Header) -> dict[str, Any]:
    code: int | None = None
    status = "rate_limited" if ".ratelimited." in log_path.name else "failure"
    if header.trailer:
        code = int(header.trailer.group(2))
        status = _status(header.trailer.group(3), header.trailer.group(4), code)
    failures = header.failure_count
    if failures is None:
        failures = 0 if status in ("success", "rate_limited") else 1
    return {"status": status, "exitCode": code, "failureCount": failures}


def _status(outcome: str | None, reason: str | None, code: int) -> str:
    """The record's status, from the trailer's outcome and reason (EXIT-2, LOG-32, LOG-42)."""
    match (outcome or "").lower():
        case "success" | "rate_limited" | "fatal" as plain:
            return plain
        case "failure":
            return _STATUS_BY_REASON.get((reason or "").lower(), "failure")
        case _:
            return result_key(code) or "failure"


def _targets(calls: list[Call], kind: ToolKind) -> list[str]:
    return list(dict.fromkeys(c.target for c in calls if c.kind is kind and c.target))


def _feature(
    calls: list[Call], mention: re.Match[str] | None, project: Path | None
) -> tuple[str | None, str | None]:
    """Directory name and description of the feature worked on (LOG-32)."""
    for call in calls:
        if call.kind in (ToolKind.EDIT, ToolKind.WRITE) and call.target:
            match = _FEATURE.search(call.target)
            if match and match.group(1) not in (".", ".."):
                found = _description(match, project) or _description_of(call.content)
                return match.group(1), found
    if mention and mention.group(1) not in (".", ".."):
        return mention.group(1), _description(mention, project)
    return None, None


def _description(match: re.Match[str], project: Path | None) -> str | None:
    relative = Path(match.group(0))
    if project is None or ".." in relative.parts:
        return None
    try:  # project content: never a FIFO, a link out of the project or a giant (issue 13)
        raw = read_file(project, project / relative, limits.FEATURE)
        return _description_of(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def _description_of(content: str | None) -> str | None:
    try:
        data = json.loads(content) if content else None
    except ValueError:
        return None
    value = data.get("description") if isinstance(data, dict) else None
    if not isinstance(value, str):
        return None
    return value if len(value) <= limits.FEATURE_TEXT else value[: limits.FEATURE_TEXT] + "…"


def _summary(calls: list[Call], errors: list[dict[str, Any]]) -> dict[str, Any]:
    kinds = {e["type"] for e in errors}
    changed = {c.target for c in calls if c.kind in (ToolKind.EDIT, ToolKind.WRITE) and c.target}
    return {
        "totalToolCalls": len(calls),
        "uniqueFilesModified": len(changed),
        "uniqueFilesRead": len(set(_targets(calls, ToolKind.READ))),
        "bashCommandsRun": sum(1 for c in calls if c.kind is ToolKind.SHELL),
        "hasLintErrors": "lint" in kinds,
        "hasTypeErrors": "typescript" in kinds,
        "hasBuildErrors": "build" in kinds,
    }


def extraction_path(log_path: Path) -> Path:
    """`007.log` -> `007.json`, `007.ratelimited.log` -> `007.ratelimited.json`."""
    return log_path.with_suffix(".json")


def write_extraction(log_path: Path, failure_count: int | None = None) -> str | None:
    """Write `<base>.json` next to the log; a warning on failure, never an exception (LOG-30)."""
    try:
        root = log_path.parents[2]  # <root>/.automaker/iterations/NNN.log
        record = extract_log(log_path, failure_count, root=root)
        text = json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        write_atomic(extraction_path(log_path), text.encode("utf-8", "replace"), mode=0o644,
                     root=root)
    # Extraction must never change a result or the exit code (LOG-30), whatever the log holds.
    except Exception as exc:
        return f"could not extract {log_path.name}: {exc}"
    return None


def extract_batch(iterations_dir: Path, report: Callable[[str], None] | None = None) -> int:
    """`--extract-batch` (LOG-31): 0, or 1 when a JSON file could not be written."""
    if not iterations_dir.is_dir():
        raise NotFoundError(f"no iterations directory: {iterations_dir}")
    failed = False
    for log in sorted(p for p in iterations_dir.glob("*.log") if p.is_file()):
        warning = write_extraction(log)
        if warning is not None:
            failed = True
            if report is not None:
                report(warning)
    return int(ExitCode.GENERAL_ERROR if failed else ExitCode.SUCCESS)
