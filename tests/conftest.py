"""Fixtures shared by every test directory."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.clock import FakeClock

FAKES = Path(__file__).resolve().parent / "fakes"


# -- fake agent CLIs ------------------------------------------------------------------------
@dataclass
class FakeAgent:
    """Scripts the fake `opencode`/`kilo`/`claude` on PATH and reads what they recorded.

    Each invocation of a fake runs the next entry of the script (the last one repeats); an
    entry is a list of steps, or {"stdin": "all"|"line"|"none", "steps": [...]}. The step
    vocabulary is documented in tests/fakes/fake_agent.py.
    """

    bin_dir: Path
    record_dir: Path
    script_path: Path

    def script(self, *invocations: list[dict[str, Any]] | dict[str, Any]) -> None:
        self.script_path.write_text(json.dumps({"invocations": list(invocations)}))

    def binary(self, name: str) -> str:
        return str(self.bin_dir / name)

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(p.read_text()) for p in sorted(self.record_dir.glob("inv-*.json"))]

    def stdin_texts(self, index: int) -> list[str]:
        path = self.record_dir / f"inv-{index:03d}.stdin.jsonl"
        if not path.exists():
            return []
        return [json.loads(line)["text"] for line in path.read_text().splitlines()]

    def pid(self, pid_file: str) -> int | None:
        path = self.record_dir / pid_file
        return int(path.read_text()) if path.exists() else None


@pytest.fixture
def fake_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeAgent:
    """Puts the fake CLIs first on PATH (for aidd and anything it starts) and isolates their
    script and records in the test's tmp dir."""
    base = tmp_path / "fake-agent"
    record_dir = base / "records"
    record_dir.mkdir(parents=True)
    fake = FakeAgent(FAKES / "bin", record_dir, base / "script.json")
    monkeypatch.setenv("PATH", f"{fake.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_AGENT_PYTHON", sys.executable)
    monkeypatch.setenv("FAKE_AGENT_SCRIPT", str(fake.script_path))
    monkeypatch.setenv("FAKE_AGENT_RECORD", str(record_dir))
    fake.script([{"init": True}, {"say": "ok"}, {"finish": True}])
    return fake


# -- time -----------------------------------------------------------------------------------
@pytest.fixture
def fake_clock() -> FakeClock:
    return FakeClock()
