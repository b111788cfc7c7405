"""LAY-7: the wheel holds every data file, installs into a fresh venv and runs from `/`."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.integration.runs import REPO, WIDE_LIMITS

DATA_DIRS = ("prompts", "scaffolding", "artifacts")

# One worker runs both tests, so the module's wheel is built once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheel")]


def _data_files() -> list[str]:
    """Every file of the three data directories, as the wheel should name it."""
    files = []
    for top in DATA_DIRS:
        for path in (REPO / top).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                files.append("aidd/data/" + path.relative_to(REPO).as_posix())
    return files


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (built,) = out.glob("aidd-*.whl")
    return built


def test_wheel_holds_every_data_file(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = _data_files()
    assert "aidd/data/scaffolding/.gitignore" in expected
    assert len([n for n in expected if n.startswith("aidd/data/prompts/audits/")]) >= 13
    assert "aidd/budget/prices.json" in names  # the price table ships inside the package
    missing = [name for name in expected if name not in names]
    assert not missing, missing
    assert not [n for n in names if n.startswith(("tests/", "bench/"))]


def test_installed_wheel_runs_an_iteration_from_root(
        wheel: Path, tmp_path: Path, fake_agent: FakeAgent) -> None:
    env_dir = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    pip = subprocess.run(
        [str(env_dir / "bin" / "pip"), "install", "-q", str(wheel)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert pip.returncode == 0, pip.stderr[-2000:]

    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIDD_", "PYTHON"))}
    env.update(HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"),
               AIDD_HOME=str(tmp_path / "aidd-home"))
    for key in ("FAKE_AGENT_PYTHON", "FAKE_AGENT_SCRIPT", "FAKE_AGENT_RECORD"):
        env[key] = os.environ[key]
    aidd = str(env_dir / "bin" / "aidd")

    where = subprocess.run([str(env_dir / "bin" / "python"), "-c",
                            "import aidd; print(aidd.__file__)"],
                           cwd="/", env=env, capture_output=True, text=True, check=True)
    assert where.stdout.startswith(str(env_dir)), where.stdout

    helped = subprocess.run([aidd, "--help"], cwd="/", env=env, capture_output=True, text=True,
                            timeout=60, check=False)
    assert helped.returncode == 0, helped.stderr
    assert "--project-dir" in helped.stdout

    fake_agent.script([{"say": "set up the project"}, {"exit": 0}])
    spec = tmp_path / "spec.md"
    spec.write_text("# Notes app\nKeep notes.\n")
    project = tmp_path / "proj"
    ran = subprocess.run(
        [aidd, "--project-dir", str(project), "--spec", str(spec), "--max-iterations", "1",
         *WIDE_LIMITS],
        cwd="/", env=env, capture_output=True, text=True, timeout=120, check=False,
        stdin=subprocess.DEVNULL,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert len(fake_agent.records()) == 1
    assert (project / ".gitignore").read_bytes() == (REPO / "scaffolding/.gitignore").read_bytes()
    assert (project / ".automaker" / "app_spec.txt").read_text() == spec.read_text()
    prompt = (project / ".automaker" / "iterations" / "001.prompt.md").read_text()
    assert "spec" in prompt.lower()
