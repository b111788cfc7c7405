"""An audit's name: the one grammar (AUD-2) that flags, config files and definition files obey,
and its kebab form. Kept free of heavy imports: the flag table checks names at start-up."""

from __future__ import annotations

import re

from aidd.errors import UsageError

# Letters, with a single '_' or '-' between words; used with fullmatch.
NAME_RE = re.compile(r"[A-Za-z]+(?:[_-][A-Za-z]+)*")


def is_audit_name(name: str) -> bool:
    return NAME_RE.fullmatch(name) is not None


def normalize_name(raw: str) -> str:
    """Strip a trailing `.md`; anything outside the grammar is a usage error (exit 2, AUD-2)."""
    name = raw.strip().removesuffix(".md")
    if not is_audit_name(name):
        raise UsageError(
            f"invalid audit name {raw!r}: use letters with single '_' or '-' between words"
        )
    return name


def kebab(name: str) -> str:
    return name.lower().replace("_", "-")
