"""The login probe runs the fake CLI for real: its prompt on stdin, and a CLI that never
answers is killed with everything it started once the probe's time is up."""

from __future__ import annotations

import os
from pathlib import Path

import psutil

from aidd.agents.registry import ADAPTERS
from aidd.clock import SystemClock
from aidd.config import Actions, Settings, load_settings
from aidd.doctor.auth import Probe, check_auth
from aidd.doctor.findings import Status
from tests.conftest import FakeAgent
from tests.waiting import wait_for


def settings(tmp_path: Path) -> Settings:
    return load_settings({"project-dir": tmp_path, "cli": "claude-code"}, Actions(doctor=True),
                         dict(os.environ), cwd=tmp_path)


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_the_probe_answers_with_the_fakes_words(tmp_path: Path, fake_agent: FakeAgent) -> None:
    fake_agent.script([{"init": True}, {"say": "OK"}, {"finish": True}])
    probe = Probe(ADAPTERS["claude-code"], fake_agent.binary("claude"), tmp_path)
    found = check_auth(settings(tmp_path), probe, SystemClock())
    assert found.status is Status.OK
    (record,) = fake_agent.records()
    assert record["env"]["AIDD_PROMPT_KIND"] == "doctor"


def test_a_cli_that_never_answers_warns_and_is_killed_with_its_tree(
        tmp_path: Path, fake_agent: FakeAgent) -> None:
    fake_agent.script([{"init": True}, {"spawn": ["sleep", "300"], "pid_file": "child"},
                       {"mark": "spawned"}, {"sleep": 300}])
    probe = Probe(ADAPTERS["claude-code"], fake_agent.binary("claude"), tmp_path, timeout_s=2)
    found = check_auth(settings(tmp_path), probe, SystemClock())
    assert found.status is Status.WARN
    assert "no answer to a test prompt within 2 s" in found.detail
    child = fake_agent.pid("child")
    assert child is not None
    wait_for(lambda: gone(child), timeout=10, what="the CLI's child killed")
    (record,) = fake_agent.records()
    wait_for(lambda: gone(record["pid"]), timeout=10, what="the CLI killed")
