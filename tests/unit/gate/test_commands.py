"""Gate commands as configured: command lines or {name, run, timeout, junit} mappings."""

from __future__ import annotations

import pytest

from aidd.gate.commands import GateCommand, GateConfigError, parse_gate


def test_command_lines_and_mappings() -> None:
    assert parse_gate("pytest -q") == (GateCommand("pytest -q", "pytest -q"),)
    assert parse_gate(["npm test -- --ci", {"name": "unit", "run": "make test", "timeout": 90,
                                            "junit": "build/junit.xml"}]) == (
        GateCommand("npm test -- --ci", "npm test -- --ci"),
        GateCommand("unit", "make test", 90, "build/junit.xml"),
    )


def test_an_unnamed_command_is_named_by_its_command_line_as_written() -> None:
    """What the console, the events, the report and the doctor show (issue 28: `!` and `/`
    were stripped, `/tmp/x/gate.sh` read "tmp x gate.sh")."""
    assert [c.name for c in parse_gate(["test ! -s red.flag", "/tmp/x/gate.sh",
                                        {"run": "./run_tests.sh --fast 'tests/*' && echo ok"},
                                        {"run": "make lint\nmake test\n"}])] == [
        "test ! -s red.flag", "/tmp/x/gate.sh", "./run_tests.sh --fast 'tests/*' && echo ok",
        "make lint\\nmake test"]
    assert parse_gate([{"name": "unit", "run": "pytest -q"}])[0].name == "unit"


@pytest.mark.parametrize(("raw", "message"), [
    ([{"run": ""}], "entry 1 needs 'run'"),
    ([42], "entry 1 must be a command line or a mapping"),
    (["ok", {"name": "x"}], "entry 2 needs 'run'"),
    ([{"run": "x", "timout": 5}], "unknown key 'timout'"),
    ([{"run": "x", "timeout": 0}], "'timeout' must be whole seconds"),
    ([{"run": "x", "timeout": True}], "'timeout' must be whole seconds"),
    ([{"run": "x", "junit": "/tmp/r.xml"}], "'junit' must be a path inside the project"),
    ([{"run": "x", "junit": "../r.xml"}], "'junit' must be a path inside the project"),
    ([{"run": "x", "name": "a/b"}], "name 'a/b' must be"),
    (["pytest", "pytest"], "two gate commands are named 'pytest'"),
    (["a\0b"], "without NUL"),
])
def test_bad_entries_say_what_is_wrong(raw: object, message: str) -> None:
    with pytest.raises(GateConfigError, match=message.replace("(", r"\(")):
        parse_gate(raw)
