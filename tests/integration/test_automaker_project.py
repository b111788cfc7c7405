"""The real aidd on a project AutoMaker created (issue 18): --check-features and --status agree
with AutoMaker, and an iteration codes (no onboarding) and finishes a feature the way
AutoMaker's board shows it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.automaker import automaker_problems, copy_fixture, loader_reads
from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.integration.runs import LIMITS, OK, RunAidd
from tests.integration.test_events_schema import validate_file


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


def test_migrate_features_rewrites_an_earlier_aidd_s_done(run_aidd: RunAidd,
                                                          env: dict[str, str],
                                                          project: Path) -> None:
    """Issue 31 item 1: an earlier aidd's `passes: true` + `in_progress`/`completed` becomes
    `verified` through a checkpoint, each change printed, every other key kept in place;
    `--status` suggests it, and `--rollback` undoes it."""
    feature(project, "feature-1-a", passes=True, status="in_progress", planSpec=None,
            branchName="b")
    feature(project, "feature-2-b", passes=True, status="completed")
    feature(project, "feature-3-c", passes=True, status="pipeline_qa")  # the pipeline's
    feature(project, "feature-4-d", passes=False, status="in_progress")
    features = project / ".automaker" / "features"
    before = {p.parent.name: json.loads(p.read_text()) for p in features.glob("*/feature.json")}
    res = run_aidd("--project-dir", str(project), "--status", env=env)
    assert res.code == 0, res.err
    assert "Note: 1 feature file(s) say passes: true with status in_progress" in res.out
    assert "--migrate-features" in res.out
    res = run_aidd("--project-dir", str(project), "--migrate-features", env=env)
    assert res.code == 0, res.out + res.err
    assert "  feature-1-a: status in_progress -> verified\n" in res.out
    assert "  feature-2-b: status completed -> verified\n" in res.out
    assert "migrated 2 feature file(s); to undo: aidd --rollback refs/aidd/" in res.out
    after = {p.parent.name: json.loads(p.read_text()) for p in features.glob("*/feature.json")}
    for name in ("feature-1-a", "feature-2-b"):
        assert list(after[name]) == list(before[name])
        assert after[name] == before[name] | {"status": "verified"}
    assert after["feature-3-c"] == before["feature-3-c"]
    assert after["feature-4-d"] == before["feature-4-d"]
    res = run_aidd("--project-dir", str(project), "--status", env=env)
    assert "Note:" not in res.out
    res = run_aidd("--project-dir", str(project), "--migrate-features", env=env)
    assert (res.code, res.out) == (0, "no feature file says passes: true with in_progress or "
                                      "completed: nothing to migrate\n")
    res = run_aidd("--project-dir", str(project), "--rollback", "before-migrate", env=env)
    assert res.code == 0, res.out + res.err
    assert json.loads((features / "feature-1-a" / "feature.json").read_text()) == \
        before["feature-1-a"]


@pytest.mark.parametrize("liveness", ["signals", "output"])  # the run's watch, or its own
def test_a_board_edit_the_agent_wrote_over_comes_back(run_aidd: RunAidd, env: dict[str, str],
                                                      fake_agent: FakeAgent, project: Path,
                                                      liveness: str) -> None:
    """Issue 31 item 7: during the attempt the board edits a description; the agent then
    writes its whole older copy back as done. aidd restores the description and says so."""
    features = project / ".automaker" / "features"
    copy_fixture(features)
    (project / ".automaker" / "app_spec.txt").write_text("<project_specification/>\n")
    name = "user-authentication"
    rel = f".automaker/features/{name}/feature.json"
    start = json.loads((features / name / "feature.json").read_text())
    board = start | {"description": "Log in with email or a passkey."}
    stale = start | {"status": "verified", "passes": True}
    # The 2 s pause stands for the time between a board edit and the agent's write; the watcher
    # reads a change within milliseconds (inotify), so the margin is wide.
    fake_agent.script([{"write_file": rel, "text": json.dumps(board, indent=2)}, {"sleep": 2},
                       {"write_file": rel, "text": json.dumps(stale, indent=2)}, *OK])
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", "--liveness",
                   liveness, *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    after = json.loads((features / name / "feature.json").read_text())
    assert after == stale | {"description": board["description"]}
    assert f"wrote over a board edit of {name}: restored description" in res.out + res.err
    records = validate_file(project)  # every record as docs/events.md says
    assert [(r["feature"], r["keys"]) for r in records if r["event"] == "feature_restored"] \
        == [(name, ["description"])]
