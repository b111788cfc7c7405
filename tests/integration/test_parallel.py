"""`--parallel N` through the real aidd and the fake agent (issue 29, docs/parallel.md): slots
on their own threads, each agent in its own worktree on `aidd/<id>`, merged by the queue into
the project, then the single loop's completion review: exit 73."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.gitrepo import git
from tests.integration.runs import LIMITS, READ, RunAidd, events, onboarded
from tests.integration.test_events_schema import validate_file

# A slot's agent: it finishes the feature its worktree is named after (`<data>/.../<id>`),
# marks it verified, adds a file of its own, and says it is done.
FINISH_OWN = ("f=$(basename \"$PWD\"); echo \"$f\" > \"$f.txt\"; "
              "printf '{\"id\":\"%s\",\"category\":\"c\",\"description\":\"%s\","
              "\"status\":\"verified\",\"passes\":true}\\n' \"$f\" \"$f\" "
              "> \".automaker/features/$f/feature.json\"")
WORK: list[dict[str, Any]] = [READ, {"spawn": ["sh", "-c", FINISH_OWN], "wait": True},
                              {"say": "done"}, {"finish": True}]
# The completion review, in the project: it reads and stops.
REVIEW: list[dict[str, Any]] = [READ, {"say": "done"}, {"finish": "stop"}, {"exit": 0}]


def git_project(root: Path, ids: list[str]) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('app')\n")
    onboarded(root)
    for fid in ids:
        feature(root, fid)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    return root


def test_two_agents_finish_two_features_to_73(run_aidd: RunAidd, env: dict[str, str],
                                               fake_agent: FakeAgent, tmp_path: Path) -> None:
    fake_agent.script(WORK, WORK, REVIEW)
    root = git_project(tmp_path / "proj", ["f1", "f2"])
    res = run_aidd("--project-dir", str(root), "--parallel", "2", *LIMITS, env=env,
                   timeout=120)
    assert res.code == 73, res.err + res.out
    records = fake_agent.records()
    cwds = sorted(Path(r["cwd"]).name for r in records[:2])
    assert cwds == ["f1", "f2"]  # each agent in its own worktree
    assert Path(records[2]["cwd"]) == root  # the completion review in the project
    for fid in ("f1", "f2"):
        assert (root / f"{fid}.txt").read_text() == f"{fid}\n"  # merged into the checkout
        data = json.loads((root / ".automaker/features" / fid / "feature.json").read_text())
        assert data["status"] == "verified"
    validate_file(root)  # every line as docs/events.md says, the slots' tags included
    merges = events(root, "merge")
    assert sorted((m["feature"], m["result"], m["reason"]) for m in merges) == [
        ("f1", "merged", None), ("f2", "merged", None)]
    slotted = [e for e in events(root) if "slot" in e]
    assert {e["slot"] for e in slotted} == {1, 2}
    starts = events(root, "iteration_start")
    assert sorted(e["number"] for e in starts) == [1, 2, 3]  # one numbering across slots
    assert "slot" not in starts[-1]  # the single completion review
    log = git(root, "log", "--first-parent", "--format=%s", "main").splitlines()
    assert sorted(log[:2]) == ["aidd: merge aidd/f1", "aidd: merge aidd/f2"]
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
    assert git(root, "worktree", "list").count("\n") == 1  # the project's own: others removed


def test_parallel_needs_a_git_project(run_aidd: RunAidd, env: dict[str, str],
                                      fake_agent: FakeAgent, tmp_path: Path) -> None:
    fake_agent.script(WORK)
    root = tmp_path / "proj"
    root.mkdir()
    onboarded(root)
    feature(root, "f1")
    res = run_aidd("--project-dir", str(root), "--parallel", "2", *LIMITS, env=env)
    assert res.code == 2
    assert res.err.count("\n") == 1
    assert "--parallel" in res.err
    assert fake_agent.records() == []
