"""The failing tests of a JUnit XML report, by identity (`classname::name`).

The report is written by the project's tools, so it is untrusted: no DTD, hence no entity
expansion of any kind, and a size cap (the reader)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

_FAILED = ("failure", "error")
# A document type declaration is where entities (billion laughs, external files) live; a
# JUnit report never needs one.
_DTD_MARKERS = (b"<!DOCTYPE", b"<!ENTITY")


class JunitError(ValueError):
    """The report cannot be read as JUnit XML."""


def failing_tests(data: bytes) -> frozenset[str]:
    """Every `<testcase>` with a `<failure>` or `<error>` child, at any depth (pytest, jest,
    vitest, mocha and maven nest suites differently)."""
    upper = data.upper()
    if any(marker in upper for marker in _DTD_MARKERS):
        raise JunitError("holds a DOCTYPE or ENTITY declaration (refused)")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise JunitError(f"not XML ({exc})") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise JunitError(f"root element is <{root.tag}>, not <testsuites> or <testsuite>")
    failing: set[str] = set()
    for case in root.iter("testcase"):
        if any(child.tag in _FAILED for child in case):
            failing.add(_identity(case))
    return frozenset(failing)


def _identity(case: ET.Element) -> str:
    name = " ".join((case.get("name") or "?").split())[:300]
    owner = " ".join((case.get("classname") or case.get("file") or "").split())[:300]
    return f"{owner}::{name}" if owner else name
