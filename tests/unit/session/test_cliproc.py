"""Short CLI helper runs leave nothing running (issue 13 item 5): what they start, in their
group or in a session of its own, carries the helper's mark and is killed when it returns."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from aidd.session.cliproc import probe_version, run_cli
from aidd.session.orphans import new_mark
from tests.fakes.storm import kill_everything, left_running

LEAVES = ("sleep 1021 </dev/null >/dev/null 2>&1 & "
          "setsid sleep 1022 </dev/null >/dev/null 2>&1 & echo 1.2.3")


@pytest.fixture
def env() -> Iterator[dict[str, str]]:
    tag = new_mark()
    yield {"PATH": os.environ["PATH"], "TEST_TAG": tag}
    kill_everything("TEST_TAG", tag)


def cli(tmp_path: Path, body: str) -> str:
    path = tmp_path / "cli"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_what_a_helper_leaves_running_is_killed(tmp_path: Path, env: dict[str, str]) -> None:
    assert run_cli([cli(tmp_path, LEAVES)], env=env, timeout_s=10) == b"1.2.3\n"
    assert left_running("TEST_TAG", env["TEST_TAG"]) == []


def test_a_helper_past_its_time_limit_is_killed_with_its_leftovers(
        tmp_path: Path, env: dict[str, str]) -> None:
    body = "setsid sleep 1023 </dev/null >/dev/null 2>&1 & sleep 1024"
    assert run_cli([cli(tmp_path, body)], env=env, timeout_s=0.3) is None
    assert left_running("TEST_TAG", env["TEST_TAG"]) == []


def test_a_version_probe_gets_no_aidd_variable_but_its_mark(tmp_path: Path) -> None:
    """Issue 27 item 13: the agent's CLI, even for `--version`, never sees aidd's settings."""
    binary = tmp_path / "cli"
    binary.write_text('#!/bin/sh\necho "${AIDD_HEARTBEAT_URL:-none} ${AIDD_SUPERVISOR_ID:+marked}"'
                      ' "$KEPT"\n')
    binary.chmod(0o755)
    env = {**os.environ, "AIDD_HEARTBEAT_URL": "https://me:SECRET@hc.example/x", "KEPT": "kept"}
    assert probe_version(str(binary), env) == "none marked kept"
