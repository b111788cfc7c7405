"""Which conversation an opencode/kilo run started when its output named none, and whether it
holds the task yet (ADP-30, issue 17): the commands that ask the CLI, and what their output
says (session/cliproc runs them).

A run hung on its first model request prints nothing, so no `sessionID` is known when the nudge
is due; the session may exist already, and `<cli> session list --format json` names it. kilo
creates it seconds before it stores the prompt in it: `<cli> export <id>` shows whether it did.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aidd.numbers import epoch_s

LIST_LIMIT = 20  # sessions of other directories may share the project (all non-git dirs do)
SLACK_MS = 2000  # clock granularity between aidd's start time and the CLI's `created`


def export_argv(binary: str, session_id: str) -> list[str]:
    return [binary, "export", session_id]


def holds_user_message(export: bytes, session_id: str) -> bool | None:
    """Does `<cli> export <id>` show a user message with text in that session? None when the
    output is not that session's export (an error, a cut or foreign document)."""
    document = _json(export)
    if not isinstance(document, dict):
        return None
    info, messages = document.get("info"), document.get("messages")
    if not isinstance(info, dict) or info.get("id") != session_id or not isinstance(
            messages, list):
        return None
    return any(_user_text(message) for message in messages)


def _user_text(message: Any) -> bool:
    if not isinstance(message, dict) or not isinstance(message.get("info"), dict):
        return False
    if message["info"].get("role") != "user" or not isinstance(message.get("parts"), list):
        return False
    return any(isinstance(part, dict) and part.get("type") == "text"
               and isinstance(part.get("text"), str) and part["text"].strip()
               for part in message["parts"])


def _json(raw: bytes) -> Any:
    """The JSON document in `raw`, skipping a line of text before it; None when there is none."""
    start = raw.find(b"{")
    try:
        return json.loads(raw[start:]) if start >= 0 else None
    except ValueError:  # UnicodeDecodeError is one
        return None


def list_argv(binary: str) -> list[str]:
    return [binary, "session", "list", "--format", "json", "--max-count", str(LIST_LIMIT)]


def pick_session(listing: bytes, project_dir: Path, since_s: float) -> str | None:
    """The newest session of `project_dir` created at or after `since_s` (Unix seconds)."""
    try:
        rows = json.loads(listing)
    except ValueError:
        return None
    want = _real(project_dir)
    found: list[tuple[float, str]] = []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        ident, created = row.get("id"), epoch_s(row.get("created"))  # milliseconds
        if not isinstance(ident, str) or not ident or created is None:
            continue
        if _real(Path(str(row.get("directory") or ""))) != want:
            continue
        if created + SLACK_MS / 1000 >= since_s:
            found.append((created, ident))
    return max(found)[1] if found else None


def _real(path: Path) -> str:
    try:
        return str(path.resolve())
    except OSError:
        return str(path)

