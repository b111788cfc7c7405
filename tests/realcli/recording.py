"""What the mock model server saw: one record per request, plus helpers to read prompts out."""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field
from typing import Any

_SECRET_HEADERS = {"authorization", "x-api-key", "proxy-authorization", "cookie"}


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names, credentials removed
    body: Any  # parsed JSON, or None when the body was empty or not JSON
    body_bytes: int
    primary: bool  # offered tools: a turn of the agent, not a side request
    reply: str  # the ReplyKind value answered, or a short note ("models", "not found")
    at_s: float  # seconds since the server started

    @property
    def had_credentials(self) -> bool:
        return bool(self.headers.get("x-credentials-present"))

    def user_texts(self) -> list[str]:
        """Every text the request carries in user messages (string content or text parts)."""
        texts: list[str] = []
        for message in (self.body or {}).get("messages", []) if isinstance(self.body, dict) else []:
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, list):
                texts += [
                    p.get("text", "")
                    for p in content
                    if isinstance(p, dict) and p.get("type") == "text"
                ]
        return texts

    def user_text_sha256s(self) -> set[str]:
        return {sha256_text(t) for t in self.user_texts()}

    def carries_text(self, needle: str) -> bool:
        return any(needle in t for t in self.user_texts())


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def clean_headers(items: list[tuple[str, str]]) -> dict[str, str]:
    headers = {k.lower(): v for k, v in items if k.lower() not in _SECRET_HEADERS}
    if any(k.lower() in _SECRET_HEADERS for k, _ in items):
        headers["x-credentials-present"] = "yes"  # the value itself is never kept
    return headers


@dataclass
class RequestLog:
    """Thread-safe list of records with a way to wait for the n-th one."""

    started: float = field(default_factory=time.monotonic)
    _records: list[RecordedRequest] = field(default_factory=list)
    _cond: threading.Condition = field(default_factory=threading.Condition)

    def since_start(self) -> float:
        return time.monotonic() - self.started

    def add(self, record: RecordedRequest) -> None:
        with self._cond:
            self._records.append(record)
            self._cond.notify_all()

    def all(self) -> list[RecordedRequest]:
        with self._cond:
            return list(self._records)

    def wait_for(self, count: int, timeout_s: float, *, primary: bool = True) -> bool:
        """True once `count` (primary) requests arrived, False after the timeout."""

        def enough() -> bool:
            return sum(1 for r in self._records if r.primary or not primary) >= count

        with self._cond:
            return self._cond.wait_for(enough, timeout_s)
