"""JSON read from the project, which is untrusted (issue 13 item 6): one rule for all of it.

Python's json accepts a lone UTF-16 surrogate (`"\\ud83d"`), which no UTF-8 output can carry:
such text is invalid here, as is nesting deep enough to exhaust the stack. Both raise
ValueError, like any other invalid JSON, so a reader reports the file and never crashes.
"""

from __future__ import annotations

import json
import re
from typing import Any

# The escape of a surrogate: only a file that has one needs the full check.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def loads(raw: bytes | str) -> Any:
    """Parse project JSON; ValueError (JSONDecodeError included) for anything unusable."""
    try:
        data = json.loads(raw)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    probe = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if _SURROGATE_ESCAPE.search(probe):
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("holds a lone UTF-16 surrogate (\\ud800-\\udfff), not text") from None
        except RecursionError:
            raise ValueError("nested too deeply") from None
    return data
