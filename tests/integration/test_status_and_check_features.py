"""The reports `--status` (text, status.md, `--json`) and `--check-features` through the real
aidd, and status.md rewritten before every agent start (FEA-31, AC-63, AC-65..67)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.integration.runs import LIMITS, OK, RunAidd, onboarded


def test_check_features_through_the_cli(run_aidd: RunAidd, aidd_env: dict[str, str],
                                        tmp_path: Path) -> None:
    """AC-63, AC-65: valid → message, 0; invalid → directory and field, 7; no features/ → 3;
    empty → `No feature files found.`, 0; a path with spaces works. No agent is needed."""
    root = tmp_path / "proj"
    root.mkdir()
    quiet = {**aidd_env, "PATH": "/nonexistent"}
    res = run_aidd("--project-dir", str(root), "--check-features", env=quiet)
    assert res.code == 3, res.err
    (root / ".automaker" / "features").mkdir(parents=True)
    res = run_aidd("--project-dir", str(root), "--check-features", env=quiet)
    assert (res.code, "No feature files found." in res.out) == (0, True), res.out + res.err
    feature(root, "feature-1-a", directory="with space")
    res = run_aidd("--project-dir", str(root), "--check-features", env=quiet)
    assert res.code == 0, res.out + res.err
    assert "All feature.json files are valid." in res.out
    assert "id: differs from its directory name" in res.out  # a warning only (issue 18)
    bad = feature(root, "feature-2-b", directory="broken dir", priority="high")
    res = run_aidd("--project-dir", str(root), "--check-features", env=quiet)
    assert res.code == 7, res.out + res.err
    assert "broken dir" in res.out
    assert "priority" in res.out
    assert str(bad.relative_to(root)) in res.out
    assert "with space" not in res.out.split("Warnings:")[0]


def test_status_through_the_cli(run_aidd: RunAidd, aidd_env: dict[str, str],
                                tmp_path: Path) -> None:
    """AC-66: FEA-31 counts (an in_progress feature with passes false is failing; Billing has
    a row), the same text in status.md, --json agrees; empty features/ → zeros; none → 3."""
    root = tmp_path / "proj"
    root.mkdir()
    res = run_aidd("--project-dir", str(root), "--status")
    assert res.code == 3, res.err
    (root / ".automaker" / "features").mkdir(parents=True)
    res = run_aidd("--project-dir", str(root), "--status")
    assert res.code == 0, res.err
    assert re.search(r"Total features:\s+0\n", res.out)
    feature(root, "feature-1-a", status="in_progress", category="Billing")
    feature(root, "feature-2-b", passes=True, status="completed")
    res = run_aidd("--project-dir", str(root), "--status")
    assert res.code == 0, res.err
    for label, count in (("Total features", 2), ("Done", 1), ("Not done", 1),
                         ("In progress", 1)):
        assert re.search(rf"^{label}:\s+{count}$", res.out, re.M), label
    assert re.search(r"^Billing\s+1\s", res.out, re.M)
    status_md = (root / ".automaker" / "status.md").read_text()
    strip = re.compile(r"^Generated: .*$", re.M)
    assert strip.sub("", status_md) == strip.sub("", res.out)
    res = run_aidd("--project-dir", str(root), "--status", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["schema"] == 2
    counts = data["features"]
    assert (counts["total"], counts["passing"], counts["failing"], counts["in_progress"]) == (
        2, 1, 1, 1)
    assert {c["name"] for c in data["categories"]} == {"Billing", "Core"}


def test_status_md_is_rewritten_before_each_agent_start(
    run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path
) -> None:
    """AC-67: the second attempt sees a status.md showing what the first attempt changed."""
    onboarded(project)
    path = feature(project, "feature-1-a")
    feature(project, "feature-2-b")
    done = json.loads(path.read_text()) | {"passes": True, "status": "completed"}
    status = ".automaker/status.md"
    fake_agent.script(
        [{"snapshot": status, "as": "status-1"},
         {"write_file": ".automaker/features/feature-1-a/feature.json", "text": json.dumps(done)},
         *OK],
        [{"snapshot": status, "as": "status-2"}, *OK])
    res = run_aidd("--project-dir", str(project), "--max-iterations", "2", *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    first = (fake_agent.record_dir / "status-1").read_text()
    second = (fake_agent.record_dir / "status-2").read_text()
    assert re.search(r"^Done:\s+0$", first, re.M), first
    assert re.search(r"^Done:\s+1$", second, re.M), second


def test_the_reports_start_without_hashing_modules(aidd_env: dict[str, str],
                                                   tmp_path: Path) -> None:
    """Issue 33: hashlib (4 ms of a start, OpenSSL's) is imported only to hash a project
    config file, which a project without one never needs."""
    root = tmp_path / "proj"
    feature(root, "feature-1-a")
    probe = ("import sys; from aidd.__main__ import main; code = main(); "
             "sys.stderr.write(f\"\\nhashlib imported: {'hashlib' in sys.modules}\\n\")")
    for flag in ("--check-features", "--status"):
        done = subprocess.run([sys.executable, "-c", probe, "--project-dir", str(root), flag],
                              capture_output=True, text=True, env=aidd_env, check=False)
        assert done.stderr.endswith("hashlib imported: False\n"), done.stderr
