"""Finding a hung opencode/kilo run's session in `session list --format json` (ADP-30), and
whether it holds the prompt in `export <id>` (issue 17)."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from aidd.agents.registry import ADAPTERS
from aidd.agents.sessions import export_argv, holds_user_message, list_argv, pick_session
from aidd.session.cliproc import find_conversation, holds_task, run_cli

START_S = 1_795_323_700.0


def listing(*rows: tuple[str, float, Path]) -> bytes:
    return json.dumps([
        {"id": ident, "title": "t", "updated": created_ms + 5, "created": created_ms,
         "projectId": "global", "directory": str(directory)}
        for ident, created_ms, directory in rows]).encode()


def test_newest_session_of_the_project_started_by_this_attempt(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    rows = listing(
        ("ses_other", START_S * 1000 + 900, other),  # newest, but another directory
        ("ses_mine", START_S * 1000 + 500, tmp_path),
        ("ses_older", START_S * 1000 + 100, tmp_path),
        ("ses_stale", START_S * 1000 - 60_000, tmp_path),  # an earlier attempt
    )
    assert pick_session(rows, tmp_path, START_S) == "ses_mine"
    assert pick_session(rows, tmp_path, START_S + 3600) is None


def test_directory_is_compared_resolved(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    assert pick_session(listing(("ses_a", START_S * 1000, tmp_path)), link, START_S) == "ses_a"


def test_bad_listings_give_none(tmp_path: Path) -> None:
    for raw in (b"", b"not json", b"{}", b"[1, null]", b'[{"id": 5, "created": 1}]',
                b'[{"id": "ses_x", "created": true, "directory": "/"}]'):
        assert pick_session(raw, tmp_path, 0.0) is None


def fake_cli(tmp_path: Path, body: str) -> str:
    path = tmp_path / "fakecli"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def latest_session(binary: str, project_dir: Path, env: dict[str, str], since_s: float,
                   timeout_s: float = 15.0) -> str | None:
    return find_conversation(ADAPTERS["opencode"], binary, project_dir, env, since_s, timeout_s)


def test_latest_session_runs_the_cli_in_the_project(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_bytes(listing(("ses_run", START_S * 1000, tmp_path)))
    argv_file = tmp_path / "argv"
    cli = fake_cli(tmp_path, f'echo "$@" > {argv_file}; [ "$MARK" = 1 ] && cat {out}')
    env = {"PATH": os.environ["PATH"], "MARK": "1"}
    assert latest_session(cli, tmp_path, env, START_S) == "ses_run"
    assert argv_file.read_text().split() == list_argv(cli)[1:]


def test_latest_session_survives_a_missing_or_stuck_cli(tmp_path: Path) -> None:
    assert latest_session(str(tmp_path / "absent"), tmp_path, {}, START_S) is None
    stuck = fake_cli(tmp_path, "sleep 30")
    assert latest_session(stuck, tmp_path, {"PATH": os.environ["PATH"]}, START_S,
                          timeout_s=0.3) is None


# -- does the conversation hold the prompt? (issue 17) ----------------------------------------
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "realcli"


def recorded_export(cli: str, case: str) -> tuple[bytes, str]:
    raw = (FIXTURES / cli / f"{case}.export.json").read_bytes()
    return raw, json.loads(raw)["info"]["id"]


@pytest.mark.parametrize(("cli", "case", "held"), [
    ("kilo", "early", False),  # kilo lists the session seconds before it stores the prompt
    ("kilo", "hang", True),
    ("opencode", "early", True),  # opencode stores it with the session
    ("opencode", "hang", True),
])
def test_recorded_exports_tell_whether_the_prompt_is_held(cli: str, case: str,
                                                          held: bool) -> None:
    raw, session = recorded_export(cli, case)
    assert holds_user_message(raw, session) is held
    assert holds_user_message(b"Exporting session: " + session.encode() + b"\n" + raw,
                              session) is held  # a line of text before the document


def test_an_export_of_another_session_or_no_export_tells_nothing() -> None:
    raw, session = recorded_export("kilo", "hang")
    assert holds_user_message(raw, "ses_other") is None
    for bad in (b"", b"Error: Session not found: ses_x", raw[: len(raw) // 2], b"[]",
                b'{"info": {"id": "ses_x"}, "messages": {}}', b"\xff{\xfe"):
        assert holds_user_message(bad, "ses_x" if b"ses_x" in bad else session) is None


@pytest.mark.parametrize("message", [
    {"info": {"role": "assistant"}, "parts": [{"type": "text", "text": "hi"}]},
    {"info": {"role": "user"}, "parts": [{"type": "file", "text": "hi"}]},
    {"info": {"role": "user"}, "parts": [{"type": "text", "text": "  \n"}]},
    {"info": {"role": "user"}, "parts": [{"type": "text", "text": 5}]},
    {"info": {"role": "user"}, "parts": "text"},
    {"info": "user", "parts": []},
    "user",
])
def test_only_a_user_message_with_text_holds_the_prompt(message: object) -> None:
    export = json.dumps({"info": {"id": "ses_x"}, "messages": [message]}).encode()
    assert holds_user_message(export, "ses_x") is False


def asked_export(cli: str, tmp_path: Path, timeout_s: float = 15.0) -> bool | None:
    return holds_task(ADAPTERS["kilocode"], cli, tmp_path, {"PATH": os.environ["PATH"]},
                      "ses_x", timeout_s)


def test_the_export_is_asked_of_the_cli_in_the_project(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_text(json.dumps({"info": {"id": "ses_x"}, "messages": [
        {"info": {"role": "user"}, "parts": [{"type": "text", "text": "the task"}]}]}))
    argv_file = tmp_path / "argv"
    cli = fake_cli(tmp_path, f'echo "$@" > {argv_file}; [ "$PWD" = "{tmp_path}" ] && cat {out}')
    assert asked_export(cli, tmp_path) is True
    assert argv_file.read_text().split() == export_argv(cli, "ses_x")[1:]


def test_a_stuck_failing_or_flooding_export_tells_nothing(tmp_path: Path) -> None:
    assert asked_export(str(tmp_path / "absent"), tmp_path) is None
    assert asked_export(fake_cli(tmp_path, "sleep 30"), tmp_path, timeout_s=0.3) is None
    assert asked_export(fake_cli(tmp_path, "echo 'Error: Session not found'; exit 1"),
                        tmp_path) is None


def test_helper_output_is_capped_and_the_helper_killed(tmp_path: Path) -> None:
    flood = fake_cli(tmp_path, "exec yes")
    started = time.monotonic()
    assert run_cli([flood], env=None, timeout_s=10, max_bytes=1 << 20) is None
    assert time.monotonic() - started < 5
    assert run_cli([fake_cli(tmp_path, "echo ok")], env=None, timeout_s=10) == b"ok\n"
