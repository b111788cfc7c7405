"""What the mock model answers: typed replies consumed in order, the last one repeating."""

from __future__ import annotations

import enum
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field


class ReplyKind(enum.Enum):
    TEXT = "text"  # a final assistant text
    WRITE_FILE = "write_file"  # a tool call to the CLI's file-writing tool
    SHELL = "shell"  # a tool call to the CLI's shell tool
    HANG = "hang"  # 200 + SSE headers, then no byte until the server stops
    STALL = "stall"  # the first events of a text reply, then no byte until the server stops
    RATE_LIMIT = "rate_limit"  # 429 with a rate-limit body, retry-after and reset headers
    OVERLOADED = "overloaded"  # 529 overloaded_error
    SERVER_ERROR = "server_error"  # 500 api_error
    AUTH_ERROR = "auth_error"  # 401 authentication_error
    GARBAGE = "garbage"  # 200 text/event-stream carrying bytes that are not the protocol
    CONTEXT_OVERFLOW = "context_overflow"  # 400: the provider's "prompt too long" (issue 32)


GREETING = "hello from the mock\n"  # what the mock's write_file writes unless told otherwise


@dataclass(frozen=True)
class Reply:
    kind: ReplyKind
    text: str = "Done."
    path: str = "hello.txt"
    content: str = GREETING
    command: str = "echo mock-shell-ok"
    retry_after_s: int = 1
    chunk_delay_s: float = 0.0  # pause between SSE events, to look like a real stream

    @classmethod
    def final(cls, text: str = "Done.") -> Reply:
        return cls(ReplyKind.TEXT, text=text)

    @classmethod
    def write_file(cls, path: str, content: str) -> Reply:
        return cls(ReplyKind.WRITE_FILE, path=path, content=content)

    @classmethod
    def shell(cls, command: str) -> Reply:
        return cls(ReplyKind.SHELL, command=command)

    @classmethod
    def of(cls, kind: ReplyKind, **kwargs: object) -> Reply:
        return cls(kind, **kwargs)  # type: ignore[arg-type]  # kwargs mirror the fields


@dataclass
class Scenario:
    """Replies for the *primary* requests (those offering tools), in order; the last repeats.

    Side requests (no tools: claude's quota probe, opencode's title generation) get
    `side_reply` so that they never consume the script. With `after_tool`, a primary request
    whose last message answers a tool call gets it instead, also without consuming the script:
    several agents at once then each follow the script's turn, whatever their interleaving.
    """

    replies: Sequence[Reply]
    side_reply: Reply = field(default_factory=Reply.final)
    after_tool: Reply | None = None
    headers: dict[str, str] = field(default_factory=dict)  # sent with every answer
    _next: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if not self.replies:
            raise ValueError("a scenario needs at least one reply")

    def take(self) -> Reply:
        with self._lock:
            reply = self.replies[min(self._next, len(self.replies) - 1)]
            self._next += 1
            return reply

    @property
    def taken(self) -> int:
        with self._lock:
            return self._next
