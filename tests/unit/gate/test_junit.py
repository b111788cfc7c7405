"""Failing tests of a JUnit XML report, by identity; a hostile report is refused, not parsed."""

from __future__ import annotations

import pytest

from aidd.gate.junit import JunitError, failing_tests

PYTEST = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4" failures="1" errors="1">
<testcase classname="tests.test_cart" name="test_total"><failure message="x"/></testcase>
<testcase classname="tests.test_cart" name="test_empty" time="0.01"/>
<testcase classname="tests.test_db" name="test_connect"><error message="boom"/></testcase>
<testcase classname="tests.test_db" name="test_skip"><skipped/></testcase>
</testsuite></testsuites>"""

JEST = b"""<testsuites name="jest tests"><testsuite name="cart.test.js">
<testcase classname="cart adds up" name="cart adds up" time="0.002">
<failure>Error: expected 3</failure></testcase>
<testcase classname="cart empties" name="cart empties"/></testsuite></testsuites>"""


def test_failures_and_errors_count_skips_and_passes_do_not() -> None:
    assert failing_tests(PYTEST) == {"tests.test_cart::test_total", "tests.test_db::test_connect"}
    assert failing_tests(JEST) == {"cart adds up::cart adds up"}
    assert failing_tests(b"<testsuite/>") == frozenset()


@pytest.mark.parametrize(("data", "why"), [
    (b'<!DOCTYPE x [<!ENTITY a "aaaa">]><testsuite>&a;</testsuite>', "DOCTYPE or ENTITY"),
    (b'<?xml version="1.0"?><!doctype testsuite SYSTEM "file:///etc/passwd"><testsuite/>',
     "DOCTYPE or ENTITY"),
    (b"<testsuite><testcase>", "not XML"),
    (b"<html/>", "root element is <html>"),
])
def test_a_report_that_is_not_plain_junit_is_refused(data: bytes, why: str) -> None:
    with pytest.raises(JunitError, match=why):
        failing_tests(data)
