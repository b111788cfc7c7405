"""No accidental night (issue 28): `aidd` typed at a terminal without --project-dir, in a
directory that holds files but was never an aidd project, says what it is about to do and asks
once; --yes, an explicit --project-dir or no terminal start as the bash original does."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.integration.runs import LIMITS, RunAidd

QUESTION = b"with full permissions over"


def _at_a_terminal(env: dict[str, str], cwd: Path, answer: bytes, *args: str
                   ) -> tuple[int, bytes]:
    parent, child = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "aidd", *args], stdin=child, stdout=child,
                            stderr=child, env=env, cwd=cwd)
    os.close(child)
    out = b""
    answered = False
    try:
        while True:
            try:
                chunk = os.read(parent, 65536)
            except OSError:  # EIO: aidd ended and its output is read
                break
            if not chunk:
                break
            out += chunk
            if QUESTION in out and not answered:
                os.write(parent, answer)
                answered = True
        return proc.wait(timeout=60), out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(parent)


@pytest.fixture
def code_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "someones-code"
    folder.mkdir()
    (folder / "main.py").write_text("print('precious')\n")
    return folder


def test_no_is_the_default_and_nothing_is_written(env: dict[str, str], fake_agent: FakeAgent,
                                                  code_dir: Path) -> None:
    code, out = _at_a_terminal(env, code_dir, b"\n", *LIMITS)
    assert QUESTION in out
    assert b"Go on? [y/N]" in out
    assert code == 2
    assert b"aidd: error: not started in" in out
    assert sorted(p.name for p in code_dir.iterdir()) == ["main.py"]
    assert fake_agent.records() == []


def test_yes_starts_the_run(env: dict[str, str], fake_agent: FakeAgent, code_dir: Path) -> None:
    fake_agent.script([{"say": "done"}, {"finish": "stop"}, {"exit": 0}])
    code, out = _at_a_terminal(env, code_dir, b"y\n", "--max-iterations", "1", *LIMITS)
    assert QUESTION in out
    assert code == 0, out.decode(errors="replace")[-2000:]
    assert len(fake_agent.records()) == 1


@pytest.mark.parametrize("how", ["--yes", "--project-dir"])
def test_yes_or_a_named_project_never_asks(env: dict[str, str], fake_agent: FakeAgent,
                                           code_dir: Path, how: str) -> None:
    fake_agent.script([{"say": "done"}, {"finish": "stop"}, {"exit": 0}])
    extra = ["--yes"] if how == "--yes" else ["--project-dir", str(code_dir)]
    code, out = _at_a_terminal(env, code_dir, b"", *extra, "--max-iterations", "1", *LIMITS)
    assert QUESTION not in out
    assert code == 0, out.decode(errors="replace")[-2000:]


def test_without_a_terminal_it_never_asks(run_aidd: RunAidd, env: dict[str, str],
                                          fake_agent: FakeAgent, code_dir: Path) -> None:
    fake_agent.script([{"say": "done"}, {"finish": "stop"}, {"exit": 0}])
    res = run_aidd("--max-iterations", "1", *LIMITS, env=env, cwd=code_dir)
    assert res.code == 0, res.err
    assert "full permissions" not in res.out
