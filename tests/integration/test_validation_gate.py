"""The validation gate through the real aidd with a fake agent and real check commands: a test
red before the run does not block, one the agent breaks does (completion refused, the features
it passed set back, the failure in the next prompt), and a gate command that hangs is killed at
its timeout with its children."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import psutil

from aidd.project.approvals import approve
from tests.conftest import FakeAgent
from tests.featurefiles import feat
from tests.integration.runs import LIMITS, RunAidd, events, iterations, onboarded, prompt

# The project's test suite: one test per file in checks/, passing when the file says "ok"; a
# JUnit report like pytest's --junitxml, and a line per failure on the output.
SUITE = """\
{
echo '<testsuite name="checks">'
for f in checks/*; do
  n=$(basename "$f")
  if [ "$(cat "$f")" = ok ]; then echo "<testcase classname=\\"checks\\" name=\\"$n\\"/>"
  else echo "<testcase classname=\\"checks\\" name=\\"$n\\"><failure/></testcase>"
       echo "FAIL checks::$n" >&2; failed=1
  fi
done
echo '</testsuite>'
} > report.xml
exit ${failed:-0}
"""
GATE = "gate:\n  - {name: checks, run: sh suite.sh, timeout: 60, junit: report.xml}\n"
TOOL = {"tool": {"name": "bash", "input": {"command": "sh suite.sh"}, "output": "ran"}}


def _passing(name: str) -> dict[str, Any]:
    data = feat(name, passes=True, status="completed")
    return {"write_file": f".automaker/features/{name}/feature.json", "text": json.dumps(data)}


def _features(project: Path) -> list[dict[str, Any]]:
    return [json.loads((project / ".automaker/features" / n / "feature.json").read_text())
            for n in ("feature-1-a", "feature-2-b")]


def _project(project: Path, config: str, env: dict[str, str]) -> None:
    """An onboarded project whose aidd.yaml (`config`) the user approved (`aidd --allow`)."""
    onboarded(project)
    for name in ("feature-1-a", "feature-2-b"):
        folder = project / ".automaker" / "features" / name
        folder.mkdir(parents=True)
        (folder / "feature.json").write_text(json.dumps(feat(name, status="backlog",
                                                             passes=False)))
    (project / "suite.sh").write_text(SUITE)
    (project / "checks").mkdir()
    (project / "checks" / "old").write_text("broken")  # red before the run: known
    (project / "checks" / "cart").write_text("ok")
    (project / ".automaker" / "aidd.yaml").write_text(config)
    approve(env, project / ".automaker" / "aidd.yaml", config.encode())


def test_a_new_failure_blocks_completion_a_known_one_does_not(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    _project(project, GATE, env)
    fake_agent.script(
        # Passes both features and breaks the cart on the way.
        [_passing("feature-1-a"), _passing("feature-2-b"),
         {"write_file": "checks/cart", "text": "broken"}, TOOL, {"finish": "stop"}],
        # Repairs the cart and passes them again.
        [{"write_file": "checks/cart", "text": "ok"}, _passing("feature-1-a"),
         _passing("feature-2-b"), TOOL, {"finish": "stop"}],
        [TOOL, {"say": "reviewed: nothing missing"}, {"finish": "stop"}])
    res = run_aidd("--project-dir", str(project), "--gate-revert-passes", "--max-iterations",
                   "6", *LIMITS, env=env)
    assert res.code == 73, res.out + res.err
    (baseline,) = events(project, "gate_baseline")
    assert [(c["name"], c["ok"], c["failures"]) for c in baseline["commands"]] == [
        ("checks", False, 1)]
    assert [(e["number"], e["new"], e["known_failures"]) for e in events(project, "gate")] == [
        (1, ["checks::cart"], 1), (2, [], 1), (3, [], 1)]
    (passed,) = events(project, "gate_passes")
    assert passed["reverted"] == passed["features"] == ["feature-1-a", "feature-2-b"]
    assert [e["state"] for e in events(project, "completion")] == ["pending", "confirmed"]
    assert "gate red: checks: 1 new failure (checks::cart)" in res.out
    assert "FAIL checks::cart" in (iterations(project) / "001.gate.log").read_text()
    second = prompt(project, 2)
    assert "validation gate is red" in second
    assert "- checks::cart" in second
    assert "FAIL checks::cart" in second  # the end of the output
    assert "validation gate is red" not in prompt(project, 3)
    assert all(f["passes"] for f in _features(project))


def test_features_passed_under_a_red_gate_are_set_back(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    _project(project, GATE + "gate-revert-passes: true\n", env)
    fake_agent.script([_passing("feature-1-a"), _passing("feature-2-b"),
                       {"write_file": "checks/cart", "text": "broken"}, TOOL,
                       {"finish": "stop"}])
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    assert "set back to passes: false (gate-revert-passes): feature-1-a, feature-2-b" in res.out
    for data in _features(project):
        assert data["passes"] is False
        assert "attempt 001 left the validation gate red (checks::cart)" in data["gateNote"]
    assert not (project / ".automaker" / ".project_completion_pending").exists()


HANG = ("if [ -f hang ]; then sleep 300 & echo $! > gate-child.pid; sleep 300; fi",)


def test_a_hung_gate_command_is_killed_at_its_timeout_with_its_tree(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    _project(project, f"gate:\n  - {{name: hang, run: '{HANG[0]}', timeout: 2}}\n", env)
    fake_agent.script([{"write_file": "hang", "text": "x"}, TOOL, {"finish": "stop"}])
    start = time.monotonic()
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *LIMITS, env=env)
    elapsed = time.monotonic() - start
    assert res.code == 0, res.out + res.err
    (gate,) = events(project, "gate")
    assert gate["timed_out"]
    assert gate["new"] == ["hang: timed out after 2s"]
    assert elapsed < 25  # 2 s of timeout and 2 s of grace, far below the 300 s sleep
    child = int((project / "gate-child.pid").read_text())
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == "zombie"


def test_a_cloned_projects_gate_runs_only_once_the_user_approved_its_file(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
        tmp_path: Path) -> None:
    """Issue 27 item 8: a repository's aidd.yaml may propose a gate; aidd runs it only after
    `aidd --allow`, for the file as approved, and says so in the header until then."""
    marker = tmp_path / "gate-ran"
    onboarded(project)
    config = project / ".automaker" / "aidd.yaml"
    config.write_text(f"gate: ['touch {marker}']\n")
    fake_agent.script([TOOL, {"finish": "stop"}])
    waiting = f"the gate of {config} (touch {marker}) waits for your approval and does not run"
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *LIMITS, env=env)
    assert waiting in res.out
    assert f"then aidd --allow --project-dir {project}" in res.out
    assert not marker.exists()
    allowed = run_aidd("--project-dir", str(project), "--allow", env=env)
    assert allowed.code == 0, allowed.err
    assert allowed.out == f"approved {config} as it is now; from it aidd runs: touch {marker}\n"
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *LIMITS, env=env)
    assert waiting not in res.out
    assert marker.exists()
    marker.unlink()
    config.write_text(f"gate: ['touch {marker}', 'true']\n")  # edited: a proposal again
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *LIMITS, env=env)
    assert "waits for your approval" in res.out
    assert not marker.exists()


def test_a_gate_is_shown_as_the_user_wrote_it_everywhere(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
        tmp_path: Path) -> None:
    """`test ! -s red.flag` read `test -s red.flag`, `/tmp/x/gate.sh` read "tmp x gate.sh"
    (issue 28, item 7): the console, the attempt header, the events, the report in text and
    JSON, and the doctor all show the command line as given."""
    onboarded(project)
    script = tmp_path / "x dir" / "gate.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    written = ["test ! -s red.flag", f"'{script}'"]
    gates = [arg for command in written for arg in ("--gate", command)]
    fake_agent.script([{"write_file": "red.flag", "text": "red"}, TOOL, {"finish": "stop"}])
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *gates, *LIMITS,
                   env=env)
    assert res.code == 0, res.out + res.err
    assert [e["name"] for e in events(project, "gate")] == written
    assert f"gate red: {written[0]}: 1 new failure ({written[0]}: exited 1)" in res.out
    assert f"gate: {written[1]}: no new failures" in res.out
    assert f"Gate: {written[0]} · {written[1]}" in res.out
    report = run_aidd("--project-dir", str(project), "--report", env=env)
    text = " ".join(report.out.split())  # a long row is wrapped at its spaces
    assert f"{written[0]} red since attempt 001" in text
    assert f"{written[1]} green" in text
    as_json = json.loads(run_aidd("--project-dir", str(project), "--report", "--json",
                                  env=env).out)
    assert sorted(c["name"] for c in as_json["gate"]["commands"]) == sorted(written)
    doctor = run_aidd("--project-dir", str(project), "--doctor", "--offline", *gates, env=env)
    assert f"programs found: {written[0]}, {written[1]}" in doctor.out
