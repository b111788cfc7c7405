"""`--max-iterations` through every configuration layer, the user's file < the project's file <
AIDD_MAX_ITERATIONS < the flag (AC-12), and 0, which runs nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.integration.runs import WIDE_LIMITS, RunAidd


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An existing codebase with one failing feature, so no run ends by completion."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "README.md").write_text("existing code\n")
    feature(root, description="d")
    return root


def test_four_layers_of_max_iterations(run_aidd: RunAidd, env: dict[str, str],
                                       fake_agent: FakeAgent, project: Path) -> None:
    """AC-12: user file 5 < project file 4 < AIDD_MAX_ITERATIONS 3 < flag 2, peeled one by one."""
    fake_agent.script([{"say": "did a thing"}, {"exit": 0}])
    user_file = Path(env["XDG_CONFIG_HOME"]) / "aidd" / "config.yaml"
    user_file.parent.mkdir(parents=True)
    user_file.write_text("max-iterations: 5\n")
    project_file = project / ".automaker" / "aidd.yaml"
    project_file.write_text("max-iterations: 4\n")
    layered = {**env, "AIDD_MAX_ITERATIONS": "3"}
    runs = [
        (("--max-iterations", "2"), layered, 2),
        ((), layered, 3),
        ((), env, 4),
        ((), env, 5),
    ]
    seen = 0
    for flags, run_env, expected in runs:
        if expected == 5:
            project_file.unlink()
        res = run_aidd("--project-dir", str(project), *flags, *WIDE_LIMITS, env=run_env)
        assert res.code == 0, res.err
        attempts = len(fake_agent.records()) - seen
        seen += attempts
        assert attempts == expected, (flags, expected, res.out[-2000:])


def test_max_iterations_zero_runs_nothing(run_aidd: RunAidd, env: dict[str, str],
                                          fake_agent: FakeAgent, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "README.md").write_text("x")
    res = run_aidd("--project-dir", str(project), "--max-iterations", "0", env=env)
    assert res.code == 0, res.err
    assert fake_agent.records() == []
