"""Finding a hung opencode/kilo run's session in `session list --format json` (ADP-30)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from aidd.agents.registry import ADAPTERS
from aidd.agents.sessions import list_argv, pick_session
from aidd.session.cliproc import find_conversation

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
