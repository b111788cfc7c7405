"""Turn a scripted tool-call reply into (tool name, arguments) for the tools a request offers."""

from __future__ import annotations

from typing import Any

from .scenario import Reply, ReplyKind

_PATH_KEYS = ("file_path", "filePath", "path")
_WRITE_NAMES = ("write", "write_file")
_SHELL_NAMES = ("bash", "shell")


def offered_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Tool name -> JSON schema of its input, for Anthropic and OpenAI request bodies."""
    tools: dict[str, dict[str, Any]] = {}
    for tool in body.get("tools") or []:
        if "function" in tool:  # OpenAI: {"type": "function", "function": {...}}
            fn = tool["function"]
            tools[fn.get("name", "")] = fn.get("parameters") or {}
        else:  # Anthropic: {"name", "input_schema"}
            tools[tool.get("name", "")] = tool.get("input_schema") or {}
    return tools


def _find(tools: dict[str, dict[str, Any]], names: tuple[str, ...]) -> str | None:
    for name in tools:
        if name.lower() in names:
            return name
    return None


def tool_call(reply: Reply, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool to call and its input; falls back to a plausible name when none is offered."""
    tools = offered_tools(body)
    if reply.kind is ReplyKind.WRITE_FILE:
        name = _find(tools, _WRITE_NAMES) or "write"
        props = tools.get(name, {}).get("properties", {})
        key = next((k for k in _PATH_KEYS if k in props), "file_path")
        return name, {key: reply.path, "content": reply.content}
    name = _find(tools, _SHELL_NAMES) or "bash"
    props = tools.get(name, {}).get("properties", {})
    args: dict[str, Any] = {"command": reply.command}
    if "description" in props:
        args["description"] = "Run the scripted command"
    return name, args
