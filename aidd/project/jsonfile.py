"""JSON read from the project, which is untrusted (issue 13 item 6): one rule for all of it."""

from __future__ import annotations

import json
import re
from typing import Any

# Python's json accepts a lone UTF-16 surrogate (`"\ud83d"`), which no UTF-8 output can carry:
# such text is invalid here, as is nesting deep enough to exhaust the stack. Both raise
# ValueError, like any other invalid JSON, so a reader reports the file and never crashes.
# The YAML front matter of a project audit definition follows the same rule (`holds_surrogate`).

# The escape of a surrogate: only a file that has one needs the full check.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def loads(raw: bytes | str) -> Any:
    """Parse project JSON; ValueError (JSONDecodeError included) for anything unusable."""
    try:
        data = json.loads(raw)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    probe = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    # A text without a backslash (found by memchr) holds no escape: ~4,000 instructions a
    # feature file fewer than the pattern's search (issue 33).
    if b"\\" in probe and _SURROGATE_ESCAPE.search(probe) and holds_surrogate(data):
        raise ValueError(SURROGATE_WHY)
    return data


SURROGATE_WHY = "holds a lone UTF-16 surrogate (\\ud800-\\udfff), not text"
_SURROGATE = re.compile("[\ud800-\udfff]")


def holds_surrogate(value: Any) -> bool:
    """Whether a string anywhere in parsed JSON or YAML holds a lone surrogate. Iterative, and
    each container is visited once: deep nesting or YAML aliases cost no stack and no blow-up."""
    seen: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, (list, tuple, dict)) and id(item) not in seen:
            seen.add(id(item))
            stack.extend([*item.keys(), *item.values()] if isinstance(item, dict) else item)
    return False
