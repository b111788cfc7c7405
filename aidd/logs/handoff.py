"""The hand-off aidd writes for the next attempt after a conversation ran out of context or
turns (issue 32): the last plan (todo list) and the last assistant message, read from the
lines aidd rendered from the CLI's events (`» ` in the attempt's log). The files touched come
from the checkpoints, not from here. The log is untrusted: everything is capped."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from aidd.agents.jsonlines import decode_event

TODOS_SHOWN = 10
TODO_CHARS = 150
MESSAGE_CHARS = 1500
PLAN_CHARS = TODOS_SHOWN * TODO_CHARS  # the raw todo input, when it is not readable JSON

# claude's TodoWrite, opencode's and kilo's todowrite (`tool: NAME (id…) {json}`, `tool: NAME
# {json} [status]`)
_TODO_TOOL = re.compile(r"^» tool: (?:TodoWrite|todowrite|todo_write|update_todo_list)\b(.*)$")
_MESSAGE = re.compile(r"^» (?:assistant|final): (.*)$")
_MORE = "»   "  # a rendered text's following lines


@dataclass(frozen=True)
class Handoff:
    plan: str = ""  # the last todo list, one `- [status] item` a line
    message: str = ""  # the last assistant message


def handoff(lines: list[str]) -> Handoff:
    """From the attempt's log lines (cleaned), oldest first."""
    plan, message = "", ""
    block: list[str] | None = None
    for line in lines:
        if block is not None and line.startswith(_MORE):
            block.append(line[len(_MORE):])
            continue
        if block is not None:
            message, block = "\n".join(block), None
        found = _MESSAGE.match(line)
        if found:
            block = [found.group(1)]
        todo = _TODO_TOOL.match(line)
        if todo:
            plan = _plan(todo.group(1))
    if block is not None:
        message = "\n".join(block)
    return Handoff(plan, _capped(message.strip(), MESSAGE_CHARS))


def _plan(rest: str) -> str:
    """The todo list of one call; its raw input, capped, when that is no readable list."""
    start, end = rest.find("{"), rest.rfind("}")
    data = decode_event(rest[start:end + 1].encode("utf-8", "replace")) if start >= 0 else None
    todos = data.get("todos") if data is not None else None
    if not isinstance(todos, list):
        return _capped(rest.strip(), PLAN_CHARS)
    items = [_todo(item) for item in todos[:TODOS_SHOWN]]
    more = len(todos) - TODOS_SHOWN
    return "\n".join(items + ([f"- … and {more} more"] if more > 0 else []))


def _todo(item: Any) -> str:
    if not isinstance(item, dict):
        return _capped(f"- {item}", TODO_CHARS)
    status = " ".join(str(item.get("status") or "?").split())[:20]
    return _capped(f"- [{status}] {item.get('content') or ''}", TODO_CHARS)


def _capped(text: str, limit: int) -> str:
    """Capped; a code fence in the agent's text cannot close the prompt's."""
    flat = "\n".join(" ".join(line.split()) for line in text.splitlines()).replace("```", "ʼʼʼ")
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"
