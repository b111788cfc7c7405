"""Checkpoints and rollback through the real `aidd`: an agent wrecks the tree and is killed for
silence; `--rollback 001` brings back every byte (untracked files too) and removes what it
added, in a git project and in a plain directory, leaving the user's HEAD, index, stash and
ignored files alone; `--checkpoints` lists them with the attempts' results (issue 15)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.gitrepo import git
from tests.integration.runs import WIDE_LIMITS, RunAidd, events, started
from tests.integration.test_events_schema import check, schema
from tests.planted import plant
from tests.waiting import wait_for

KILLED = ("--max-iterations", "1", "--idle-nudge-timeout", "0", "--idle-timeout", "1",
          "--timeout", "30")
WRECK = [{"say": "rewriting everything"},
         {"write_file": "src/app.py", "text": "wrecked\n"},
         {"write_file": "notes.txt", "text": "overwritten\n"},
         {"write_file": "junk/deep/new.txt", "text": "added\n"},
         {"write_file": ".automaker/features/feature-1-a/feature.json", "text": "{}\n"},
         {"write_file": "build/cache", "text": "ignored v2\n"},
         {"sleep": 30}]



def project(tmp_path: Path, with_git: bool) -> Path:
    root = tmp_path / "shop"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("v1\n")
    (root / "notes.txt").write_text("untracked\n")
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "cache").write_text("ignored v1\n")
    feature(root, description="d")  # failing: the run does not end by completion
    if with_git:
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "src", ".gitignore")
        git(root, "commit", "-qm", "first")
        (root / "staged.txt").write_text("staged\n")
        git(root, "add", "staged.txt")
        (root / "stashed.txt").write_text("stash\n")
        git(root, "stash", "push", "-q", "--include-untracked", "--", "stashed.txt")
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    skip = (".git/", ".automaker/iterations/", ".automaker/checkpoints", ".automaker/events",
            ".automaker/status.md", ".automaker/aidd-state.json", ".automaker/aidd.lock")
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.relative_to(root).as_posix().startswith(skip)}


@pytest.mark.parametrize("with_git", [True, False], ids=["git", "plain"])
def test_a_wrecked_and_killed_attempt_is_rolled_back_byte_for_byte(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path,
        with_git: bool) -> None:
    root = project(tmp_path, with_git)
    user = ((git(root, "rev-parse", "HEAD"), git(root, "diff", "--cached"),
             git(root, "stash", "list")) if with_git else ())
    fake_agent.script(WRECK)
    res = run_aidd("--project-dir", str(root), *KILLED, env=env)
    assert res.code == 0, res.err
    labels = [e["label"] for e in events(root, "checkpoint")]
    assert labels == ["001", "001-prekill", "001-end"]
    prekill = [e for e in events(root, "checkpoint") if e["label"] == "001-prekill"]
    assert prekill[0]["files"] >= 4  # what the agent did before it went silent

    done = run_aidd("--project-dir", root.name, "--rollback", "001", env=env, cwd=root.parent)
    assert done.code == 0, done.err
    assert "restored src/app.py" in done.out
    assert "removed  junk/deep/new.txt" in done.out
    # A command that works pasted anywhere: the project by its absolute path (issue 28).
    undo = shlex.split(done.out.partition("to undo: ")[2].splitlines()[0])
    assert undo[:2] == ["aidd", "--rollback"]
    assert undo[2].startswith("refs/aidd/checkpoints/")
    assert undo[3:] == ["--project-dir", str(root)]
    after = snapshot(root)
    assert after["src/app.py"] == b"v1\n"
    assert after["notes.txt"] == b"untracked\n"
    assert json.loads(after[".automaker/features/feature-1-a/feature.json"])["description"] == "d"
    assert after["build/cache"] == b"ignored v2\n"  # ignored: never in a checkpoint
    assert not (root / "junk").exists()
    if with_git:
        assert (git(root, "rev-parse", "HEAD"), git(root, "diff", "--cached"),
                git(root, "stash", "list")) == user
    (rolled,) = events(root, "rollback")
    assert check(rolled, {**schema()["common"], **schema()["events"]["rollback"]}, "x") == []
    assert rolled["removed"] == ["junk/deep/new.txt"]

    listed = run_aidd("--project-dir", str(root), "--checkpoints", "--json", env=env)
    rows = json.loads(listed.out)["checkpoints"]
    assert [r["label"] for r in rows] == ["001", "001-prekill", "001-end", "before-rollback"]
    assert (rows[2]["result"], rows[2]["outcome"]) == (71, "failure")  # the idle kill
    table = run_aidd("--project-dir", str(root), "--checkpoints", env=env)
    assert table.out.splitlines()[0].split()[:3] == ["checkpoint", "time", "run"]
    assert "001-prekill" in table.out

    missing = run_aidd("--project-dir", str(root), "--rollback", "nosuch", env=env)
    assert f"(see aidd --checkpoints --project-dir {root})" in missing.err
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    undone = run_aidd(*undo[1:], env=env, cwd=elsewhere)
    assert undone.code == 0, undone.err
    assert (root / "src" / "app.py").read_text() == "wrecked\n"
    assert (root / "junk" / "deep" / "new.txt").exists()


def test_rollback_to_an_unknown_checkpoint_is_one_line_and_changes_nothing(
        run_aidd: RunAidd, tmp_path: Path) -> None:
    root = project(tmp_path, with_git=False)
    before = snapshot(root)
    res = run_aidd("--project-dir", str(root), "--rollback", "007")
    assert res.code != 0
    assert res.err.count("\n") == 1
    assert "no checkpoint" in res.err
    assert snapshot(root) == before


def test_rollback_is_refused_while_an_aidd_runs_on_the_project(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path) -> None:
    root = project(tmp_path, with_git=False)
    fake_agent.script([{"write_file": "src/app.py", "text": "half done\n"}, {"line": "working"},
                       {"sleep": 3}, {"exit": 0}])
    with started(env, tmp_path, "--project-dir", str(root), "--max-iterations", "1",
                 *WIDE_LIMITS) as first:
        log = root / ".automaker" / "events.jsonl"
        wait_for(lambda: log.exists() and events(root, "checkpoint"), 20, "the first checkpoint")
        wait_for(fake_agent.records, 20, "the agent to start")
        refused = run_aidd("--project-dir", str(root), "--rollback", "001", env=env)
        assert refused.code == 1
        assert f"an aidd (pid {first.pid}) is running" in refused.err
        assert f"(aidd --stop --project-dir {root})" in refused.err
        assert len(refused.err.strip().splitlines()) == 1
        assert first.wait(timeout=30) == 0
    assert (root / "src" / "app.py").read_text() == "half done\n"  # the agent's work stands


@pytest.mark.parametrize("action", ["--checkpoints", "--status"])
def test_a_fifo_planted_at_events_jsonl_never_blocks_a_one_shot(
        run_aidd: RunAidd, tmp_path: Path, action: str) -> None:
    root = project(tmp_path, with_git=False)
    plant(root / ".automaker" / "events.jsonl", "fifo")
    res = run_aidd("--project-dir", str(root), action, timeout=20)
    assert res.code == 0, res.err


def test_a_failed_rollback_makes_no_checkpoint_repository(run_aidd: RunAidd,
                                                         tmp_path: Path) -> None:
    root = project(tmp_path, with_git=False)
    res = run_aidd("--project-dir", str(root), "--rollback", "001")
    assert res.code != 0
    assert "has none" in res.err
    assert not (root / ".automaker" / "checkpoints.git").exists()
