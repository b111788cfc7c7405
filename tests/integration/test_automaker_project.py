"""The real aidd on a project AutoMaker created (issue 18): --check-features and --status agree
with AutoMaker, and an iteration codes (no onboarding) and finishes a feature the way
AutoMaker's board shows it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.automaker import automaker_problems, copy_fixture, loader_reads
from tests.conftest import FakeAgent
from tests.integration.runs import LIMITS, OK, RunAidd


def test_an_automaker_project_through_the_real_aidd(run_aidd: RunAidd, env: dict[str, str],
                                                    fake_agent: FakeAgent,
                                                    project: Path) -> None:
    features = project / ".automaker" / "features"
    copy_fixture(features)
    (project / ".automaker" / "app_spec.txt").write_text("<project_specification/>\n")
    res = run_aidd("--project-dir", str(project), "--check-features", env=env)
    assert res.code == 0, res.out + res.err
    assert "Total files: 10\nValid: 10\nInvalid: 0\n" in res.out
    res = run_aidd("--project-dir", str(project), "--status", "--json", env=env)
    assert res.code == 0, res.err
    counts = json.loads(res.out)["features"]
    assert (counts["done"], counts["waiting_approval"], counts["invalid"]) == (2, 1, 0)
    name = "user-authentication"
    done = json.loads((features / name / "feature.json").read_text()) | {
        "passes": True, "status": "verified"}
    fake_agent.script([{"write_file": f".automaker/features/{name}/feature.json",
                        "text": json.dumps(done, indent=2)}, *OK])
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    assert fake_agent.records()[0]["env"]["AIDD_PROMPT_KIND"] == "coding"
    status = (project / ".automaker" / "status.md").read_text()
    assert "Done:                 2" in status  # written before the attempt
    res = run_aidd("--project-dir", str(project), "--status", "--json", env=env)
    assert json.loads(res.out)["features"]["done"] == 3
    assert set(loader_reads(features)) == {p.name for p in features.iterdir()}
    assert automaker_problems(features) == []
