"""Commands are shown as the user wrote them, in one way (`console.shell_line`), and every
"to undo" or "next" line is a command that works pasted anywhere (issue 28, item 7)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from aidd.console import aidd_command, program_of, shell_line
from aidd.notify.targets import parse_notify, redact_argv, shown_command


def test_a_command_line_is_shown_as_written_an_argv_quoted_for_a_shell() -> None:
    assert shell_line("test ! -s red.flag") == "test ! -s red.flag"
    assert shell_line("/tmp/x/gate.sh") == "/tmp/x/gate.sh"
    assert shell_line(["aidd", "--rollback", "refs/a b", "--gate", "test ! -s x"]) == (
        "aidd --rollback 'refs/a b' --gate 'test ! -s x'")
    assert shell_line("make lint\nmake\ttest") == "make lint\\nmake\\ttest"  # one line


def test_an_aidd_command_names_the_project_by_its_absolute_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "my shop"
    project.mkdir()
    monkeypatch.chdir(tmp_path)
    line = aidd_command(Path("my shop"), "--rollback", "refs/aidd/x")
    assert shlex.split(line) == ["aidd", "--rollback", "refs/aidd/x", "--project-dir",
                                 str(project)]
    assert shlex.split(aidd_command(Path("./my shop/../my shop"), "--stop"))[-1] == str(project)


def test_the_program_of_a_command_line_skips_assignments() -> None:
    assert program_of("CI=1 TOKEN=x pytest -q") == "pytest"
    assert program_of("'/my dir/run.sh' --fast") == "/my dir/run.sh"
    assert program_of("A=1") is None
    with pytest.raises(ValueError, match="quotation"):
        program_of("echo 'open")


def test_a_notify_command_shows_its_program_as_written_and_hides_the_rest() -> None:
    """Its arguments and a leading `VAR=value` may carry a token: never shown."""
    assert shown_command("curl -H 'Authorization: Bearer SECRET' https://x") == "curl …"
    assert shown_command("TOKEN=SECRET ./notify.sh") == "./notify.sh …"
    assert shown_command("'/opt/my tools/notify-me-about-the-night-and-more.sh' x") == (
        "'/opt/my tools/notify-me-about-the-night-and-more.sh' …")
    assert shown_command("/usr/local/bin/notify.sh") == "/usr/local/bin/notify.sh"
    assert shown_command("'my notify.sh'") == "'my notify.sh'"
    assert shown_command("echo 'open") == "? …"
    (target,) = parse_notify("command:TOKEN=SECRET /bin/notify --key SECRET")
    assert "SECRET" not in target.shown()
    assert "SECRET" not in " ".join(redact_argv(("--notify-command", "TOKEN=SECRET x")))
