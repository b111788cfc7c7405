"""The project's `.automaker/aidd.yaml` is repository content (issue 13 items 2, 14, 15): it
cannot point aidd at files outside the project, switch supervision off, or exhaust memory;
the user's own config (or a flag) can allow the first two."""

from __future__ import annotations

import os
import resource
import stat
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.integration.runs import WIDE_LIMITS, RunAidd, tree_snapshot


def _project_config(project: Path, text: str) -> None:
    (project / ".automaker").mkdir(exist_ok=True)
    (project / ".automaker" / "aidd.yaml").write_text(text)


def _user_config(env: dict[str, str], text: str) -> None:
    path = Path(env["XDG_CONFIG_HOME"]) / "aidd" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "credentials"
    path.write_text("aws_secret_access_key = hunter2\n")
    path.chmod(0o600)
    return path


def test_a_spec_outside_the_project_is_refused_from_the_project_file(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path,
        secret: Path) -> None:
    project = tmp_path / "cloned"
    project.mkdir()
    _project_config(project, f"spec: {secret}\n")
    before = tree_snapshot(project)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *WIDE_LIMITS, env=env)
    assert res.code == 2, res.err
    assert "aidd.yaml: key 'spec' names a file outside the project" in res.err
    assert "hunter2" not in res.out + res.err
    assert tree_snapshot(project) == before
    assert fake_agent.records() == []


def test_the_same_spec_from_a_flag_is_copied_with_no_wider_mode(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path,
        secret: Path) -> None:
    project = tmp_path / "new"
    res = run_aidd("--project-dir", str(project), "--spec", str(secret), "--max-iterations",
                   "1", *WIDE_LIMITS, env=env)
    assert res.code == 0, res.err
    copy = project / ".automaker" / "app_spec.txt"
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600


@pytest.mark.parametrize("line", ["timeout: 0", "idle-timeout: 0", "keep-children: true",
                                  "timeout: 999999"])
def test_the_project_file_cannot_loosen_supervision(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
        line: str) -> None:
    _project_config(project, line + "\n")
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", env=env)
    assert res.code == 2, res.err
    assert res.err.count("\n") == 1, res.err
    assert "trust-project-config" in res.err
    assert fake_agent.records() == []
    _user_config(env, "trust-project-config: true\n")
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", env=env)
    assert res.code == 0, res.err


def test_the_project_file_cannot_raise_the_agents_at_once(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    """N agents cost N times an hour: `parallel` above the user's is refused (issue 29)."""
    _project_config(project, "parallel: 3\n")
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", env=env)
    assert res.code == 2, res.err
    assert "key 'parallel: 3' runs more agents at once than you set" in res.err
    assert fake_agent.records() == []
    _project_config(project, "parallel: 1\n")  # as many as the user's: allowed
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", env=env)
    assert res.code == 0, res.err


def test_the_project_file_may_tighten_and_may_not_trust_itself(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    _project_config(project, "timeout: 600\nidle-timeout: 120\n")
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", env=env)
    assert res.code == 0, res.err
    _project_config(project, "trust-project-config: true\ntimeout: 0\n")
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", env=env)
    assert res.code == 2, res.err
    assert "not allowed in a project config file" in res.err


def _small_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


BOMB = "\n".join(["a: &a [x, x, x, x, x, x, x, x, x]"] +
                 [f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]"
                  for i in range(8)]) + "\n"


@pytest.mark.parametrize(("text", "needle"), [
    (BOMB, "aliases"),
    ("[" * 100_000 + "]" * 100_000 + "\n", "not valid YAML"),
    ("model: " + "x" * 5_000_000 + "\n", "larger than"),
    ("model: '" + "é" * 200_000 + "'\n", "characters)"),
])
def test_hostile_yaml_is_one_short_line(env: dict[str, str], project: Path, text: str,
                                        needle: str) -> None:
    import subprocess
    import sys

    _project_config(project, text)
    done = subprocess.run([sys.executable, "-m", "aidd", "--project-dir", str(project),
                           "--status"], env=env, capture_output=True, text=True, timeout=30,
                          preexec_fn=_small_memory, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr[:500]
    assert needle in done.stderr
    assert done.stderr.count("\n") == 1
    assert len(done.stderr) < 500
    assert "Traceback" not in done.stderr
    assert os.path.getsize(project / ".automaker" / "aidd.yaml") > 0
