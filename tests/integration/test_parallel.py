"""`--parallel N` through the real aidd and the fake agent (issue 29, docs/parallel.md): slots
on their own threads, each agent in its own worktree on `aidd/<id>`, merged by the queue into
the project, then the single loop's completion review: exit 73."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.gitrepo import git
from tests.integration.runs import (
    LIMITS,
    READ,
    WIDE_LIMITS,
    RunAidd,
    console,
    events,
    onboarded,
    started,
)
from tests.integration.test_events_schema import validate_file
from tests.reliability.harness import running
from tests.waiting import wait_for

# Each test runs two or three agents and their git at once: on one worker, one after another,
# so they do not load a two-core machine together (a merge was seen missing under that load).
pytestmark = pytest.mark.xdist_group("parallel")

# A slot's agent: it finishes the feature its worktree is named after (`<data>/.../<id>`),
# marks it verified, adds a file of its own, and says it is done.
FINISH_OWN = ("f=$(basename \"$PWD\"); echo \"$f\" > \"$f.txt\"; "
              "printf '{\"id\":\"%s\",\"category\":\"c\",\"description\":\"%s\","
              "\"status\":\"verified\",\"passes\":true}\\n' \"$f\" \"$f\" "
              "> \".automaker/features/$f/feature.json\"")
WORK: list[dict[str, Any]] = [READ, {"spawn": ["sh", "-c", FINISH_OWN], "wait": True},
                              {"say": "done"}, {"finish": True}]
# Both agents also write the same new file: the second merge conflicts.
WORK_SHARED: list[dict[str, Any]] = [
    READ, {"spawn": ["sh", "-c", "echo \"$(basename \"$PWD\")\" > shared.txt; " + FINISH_OWN],
           "wait": True}, {"say": "done"}, {"finish": True}]
# A sent-back feature's next attempt: its work committed, the project's branch merged into its
# own taking the project's side where both changed a file, the feature finished again.
GIT = "git -c user.name=agent -c user.email=agent@example.com"
RESOLVE: list[dict[str, Any]] = [
    READ, {"spawn": ["sh", "-c", f"git add -A; {GIT} commit -qm wip; "
                                 f"{GIT} merge -q -X theirs -m merged main; " + FINISH_OWN],
           "wait": True}, {"say": "done"}, {"finish": True}]
# The agent leaves a file the gate refuses; then one that removes it.
WORK_BAD: list[dict[str, Any]] = [
    READ, {"spawn": ["sh", "-c", "echo bad > bad.txt; " + FINISH_OWN], "wait": True},
    {"say": "done"}, {"finish": True}]
FIX: list[dict[str, Any]] = [
    READ, {"spawn": ["sh", "-c", "rm -f bad.txt; " + FINISH_OWN], "wait": True},
    {"say": "done"}, {"finish": True}]
# An attempt that costs $1 and finishes nothing.
COSTLY: list[dict[str, Any]] = [READ, {"say": "working"}, {"finish": {"cost": 1.0}}]
# Half the work, then silence until aidd is killed.
HALF: list[dict[str, Any]] = [
    {"spawn": ["sh", "-c", "echo half > \"$(basename \"$PWD\").half\""], "wait": True},
    {"line": "working"}, {"sleep": 60}]
# The completion review, in the project: it reads and stops.
REVIEW: list[dict[str, Any]] = [READ, {"say": "done"}, {"finish": "stop"}, {"exit": 0}]


def git_project(root: Path, ids: list[str], tracked: bool = True) -> Path:
    """A git project on `main` with a backlog feature per id; `tracked`: `.automaker/` is in
    the repository (else ignored: the feature files travel by copy, docs/parallel.md)."""
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('app')\n")
    onboarded(root)
    for fid in ids:
        feature(root, fid)
    if not tracked:
        (root / ".gitignore").write_text(".automaker/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    return root


@pytest.mark.parametrize("tracked", [True, False], ids=["tracked", "ignored"])
def test_two_agents_finish_two_features_to_73(run_aidd: RunAidd, env: dict[str, str],
                                               fake_agent: FakeAgent, tmp_path: Path,
                                               tracked: bool) -> None:
    fake_agent.script(WORK, WORK, REVIEW)
    root = git_project(tmp_path / "proj", ["f1", "f2"], tracked)
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
    assert sorted(e["index"] for e in starts) == [1, 2, 3]  # iterations counted as N = 1 does
    for start in starts:
        header = (root / start["log"]).read_text()
        assert f"Iteration {start['index']} (log {start['number']:03d})" in header
    assert "slot" not in starts[-1]  # the single completion review
    lines = res.out.splitlines()
    for slot in (1, 2):  # a slot's console lines start with it: its header, its words
        assert any(line.startswith(f"[slot {slot}] [aidd] Iteration ") for line in lines)
        assert any(line.startswith(f"[slot {slot}] [aidd ") for line in lines)
    review = next(i for i, line in enumerate(lines) if "(log 003)" in line)
    assert not any(line.startswith("[slot") for line in lines[review:])  # one agent: no tag
    log = git(root, "log", "--first-parent", "--format=%s", "main").splitlines()
    assert sorted(log[:2]) == ["aidd: merge aidd/f1", "aidd: merge aidd/f2"]
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
    assert git(root, "worktree", "list").count("\n") == 1  # the project's own: others removed


def test_agents_start_one_after_another(run_aidd: RunAidd, env: dict[str, str],
                                        fake_agent: FakeAgent, tmp_path: Path) -> None:
    """A real opencode (and kilo) starting while another starts can find the local database
    they share locked, and end at once with result 72 (seen in CI with two real CLIs): the
    next slot's agent starts once the last has printed its first output."""
    lock = tmp_path / "opencode.db.lock"
    start: list[dict[str, Any]] = [{"startup_db": str(lock), "hold": 1.0}]
    fake_agent.script(start + WORK, start + WORK, REVIEW)
    root = git_project(tmp_path / "proj", ["f1", "f2"])
    res = run_aidd("--project-dir", str(root), "--parallel", "2", *LIMITS, env=env,
                   timeout=120)
    assert res.code == 73, res.err + res.out
    assert "database is locked" not in res.out
    assert [e["result"] for e in events(root, "iteration_end")] == [0, 0, 0]
    assert sorted(m["feature"] for m in events(root, "merge")) == ["f1", "f2"]


def test_the_board_shows_each_worked_feature_on_its_branch(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path) -> None:
    """AutoMaker's auto mode marks a feature it works in a worktree (`branchName`, status
    `in_progress`) in the project's file; aidd does the same, keeps the mark out of every
    worktree's copy, and takes it off before the merge (where `.automaker/` is tracked a
    local change would refuse it): the board ends as after AutoMaker's own merge."""
    root = git_project(tmp_path / "proj", ["f1", "f2"])
    seen = tmp_path / "seen"
    seen.mkdir()
    look = (f'f=$(basename "$PWD"); cp "{root}/.automaker/features/$f/feature.json" '
            f'"{seen}/$f.board.json"; cp -r .automaker/features "{seen}/$f.copies"; ')
    work: list[dict[str, Any]] = [READ, {"spawn": ["sh", "-c", look + FINISH_OWN],
                                         "wait": True}, {"say": "done"}, {"finish": True}]
    fake_agent.script(work, work, REVIEW)
    res = run_aidd("--project-dir", str(root), "--parallel", "2", *LIMITS, env=env,
                   timeout=120)
    assert res.code == 73, res.err + res.out
    for fid in ("f1", "f2"):
        board = json.loads((seen / f"{fid}.board.json").read_text())
        assert (board["branchName"], board["status"]) == (f"aidd/{fid}", "in_progress")
        for copy in (seen / f"{fid}.copies").glob("*/feature.json"):
            assert "branchName" not in json.loads(copy.read_text()), copy
        done = json.loads((root / ".automaker/features" / fid / "feature.json").read_text())
        assert done["status"] == "verified"
        assert "branchName" not in done
    assert sorted(m["result"] for m in events(root, "merge")) == ["merged", "merged"]
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_board_edit_made_while_a_slot_works_outlives_the_merge(
        env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path) -> None:
    """A person raises a feature's priority on the board (AutoMaker, or an editor) while its
    slot's agent works in the worktree; the agent then finishes from its own copy. After the
    merge the board keeps the person's priority beside the agent's verdict (`.automaker/` not
    tracked, so the feature file travels by copy); before, the agent's copy overwrote it."""
    go = tmp_path / "go"
    work: list[dict[str, Any]] = [READ, {"line": "working"}, {"wait_file": str(go)},
                                  {"spawn": ["sh", "-c", FINISH_OWN], "wait": True},
                                  {"say": "done"}, {"finish": True}]
    fake_agent.script(work, REVIEW)
    root = git_project(tmp_path / "proj", ["f1"], tracked=False)
    board = root / ".automaker/features/f1/feature.json"
    with started(env, tmp_path, "--project-dir", str(root), "--parallel", "2",
                 *WIDE_LIMITS) as run:
        wait_for(lambda: "branchName" in board.read_text(), 30, "the board's mark")
        edited = json.loads(board.read_text()) | {"priority": 1}
        board.write_text(json.dumps(edited, indent=2) + "\n")
        go.touch()
        assert run.wait(timeout=90) == 73, console(tmp_path)
    data = json.loads(board.read_text())
    assert (data["status"], data["priority"]) == ("verified", 1)
    assert "branchName" not in data


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
    assert "--parallel 2 needs a project at the top of its own git repository" in res.err
    assert fake_agent.records() == []


def test_six_independent_features_at_three_to_73(run_aidd: RunAidd, env: dict[str, str],
                                                  fake_agent: FakeAgent,
                                                  tmp_path: Path) -> None:
    ids = [f"f{n}" for n in range(1, 7)]
    fake_agent.script(*[WORK] * 6, REVIEW)
    root = git_project(tmp_path / "proj", ids)
    res = run_aidd("--project-dir", str(root), "--parallel", "3", *LIMITS, env=env,
                   timeout=180)
    assert res.code == 73, res.err + res.out
    validate_file(root)
    merged = sorted(m["feature"] for m in events(root, "merge") if m["result"] == "merged")
    assert merged == ids
    assert {e["slot"] for e in events(root, "slot_start")} == {1, 2, 3}
    assert len(fake_agent.records()) == 7  # one attempt per feature, then the review
    # The morning report follows each worktree's own checkpoints: every feature became passing
    # once, in its own attempt, and none "failed again" (a worktree started before another
    # feature's merge lacks it, and the project's own checkpoint comes after the merges).
    report = json.loads(run_aidd("--project-dir", str(root), "--report", "--json",
                                 env=env).out)["features"]
    assert sorted(p["feature"] for p in report["became_passing"]) == ids
    assert all(p["attempt"] is not None for p in report["became_passing"])
    assert report["failed_again"] == []
    for fid in ids:
        assert (root / f"{fid}.txt").is_file()


def test_a_conflict_is_sent_back_and_then_solved(run_aidd: RunAidd, env: dict[str, str],
                                                 fake_agent: FakeAgent, tmp_path: Path) -> None:
    """Both agents write `shared.txt`: the second merge conflicts, the feature goes back open
    with reason `conflict` in its next prompt; that attempt merges the project's branch into
    its own (taking the project's side) and the feature is merged."""
    fake_agent.script(WORK_SHARED, WORK_SHARED, RESOLVE, REVIEW)
    root = git_project(tmp_path / "proj", ["f1", "f2"])
    res = run_aidd("--project-dir", str(root), "--parallel", "2", *LIMITS, env=env,
                   timeout=120)
    assert res.code == 73, res.err + res.out
    validate_file(root)
    merges = [(m["feature"], m["result"], m["reason"]) for m in events(root, "merge")]
    (first, _, _), (loser, result, reason), (again, last, _) = merges
    assert (result, reason) == ("conflict", "conflict")
    assert again == loser != first
    assert last == "merged"
    retry = [e for e in events(root, "iteration_start") if e.get("slot")][-1]
    prompt = (root / ".automaker" / retry["prompt_file"].removeprefix(".automaker/")).read_text()
    assert f"aidd/{loser} was not merged (conflict" in prompt
    assert (root / "shared.txt").read_text() == f"{first}\n"  # the project's side kept
    assert (root / f"{loser}.txt").is_file()
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""


def test_both_agents_changelog_entries_merge_without_a_conflict(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path) -> None:
    """Every agent adds its entry to `.automaker/CHANGELOG.md` (the prompts ask it to): the
    queue merges that log with both sides' lines (`merge=union`, aidd's own attributes),
    where before the second merge of each pair conflicted and went back for another attempt."""
    log = "printf '\\n- %s: done\\n' \"$(basename \"$PWD\")\" >> .automaker/CHANGELOG.md; "
    work: list[dict[str, Any]] = [READ, {"spawn": ["sh", "-c", log + FINISH_OWN], "wait": True},
                                  {"say": "done"}, {"finish": True}]
    fake_agent.script(work, work, REVIEW)
    root = git_project(tmp_path / "proj", ["f1", "f2"])
    res = run_aidd("--project-dir", str(root), "--parallel", "2", *LIMITS, env=env,
                   timeout=120)
    assert res.code == 73, res.err + res.out
    # Seen once in CI (stop 38): f1's merge said "nothing new" though its branch holds its
    # commit; what the console and the branches said then, for the next time.
    assert sorted((m["feature"], m["result"]) for m in events(root, "merge")) == [
        ("f1", "merged"), ("f2", "merged")], res.out[-3000:] + subprocess.run(
            ["git", "log", "--all", "--graph", "--oneline", "--date=iso", "--format=%h %cd %s"],
            cwd=root, capture_output=True, text=True).stdout
    changelog = (root / ".automaker" / "CHANGELOG.md").read_text()
    assert "- f1: done" in changelog
    assert "- f2: done" in changelog
    assert "<<<<<<<" not in changelog
    assert len(fake_agent.records()) == 3  # no attempt sent back


def test_a_branch_red_in_its_worktree_never_enters_the_queue(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path) -> None:
    """The agent finishes its feature leaving `bad.txt`, which the gate refuses: the gate in
    the slot's worktree is red, so the branch is not merged (no `merge` for that attempt, the
    project's checkout never holds `bad.txt`); the feature stays with the slot, whose next
    attempt, in the same worktree, is told which check went red, fixes it and is merged."""
    fake_agent.script(WORK_BAD, FIX, REVIEW)
    root = git_project(tmp_path / "proj", ["f1"])
    seen = tmp_path / "gate-runs"  # each gate run: where, and whether bad.txt was there
    gate = (f'if test -e bad.txt; then echo "$(pwd -P) red" >> {seen}; exit 1; fi; '
            f'pwd -P >> {seen}')
    res = run_aidd("--project-dir", str(root), "--parallel", "2", "--gate", gate,
                   *LIMITS, env=env, timeout=120)
    assert res.code == 73, res.err + res.out
    validate_file(root)
    first, again, _ = fake_agent.records()
    tree = Path(first["cwd"])
    assert Path(again["cwd"]) == tree  # the same slot's worktree
    runs = seen.read_text().splitlines()
    assert f"{root.resolve()} red" not in runs
    assert f"{tree.resolve()} red" in runs
    starts = [e for e in events(root, "iteration_start") if "slot" in e]
    assert [(e["number"], e["slot"], e["feature"]) for e in starts] == [(1, 1, "f1"), (2, 1, "f1")]
    assert len(events(root, "slot_start")) == 1
    red = [g for g in events(root, "gate") if g["number"] == 1]
    assert [(g["slot"], g["feature"], g["new_failures"]) for g in red] == [(1, "f1", 1)]
    assert (root / red[0]["log"]).is_file()  # its own log, named for the attempt
    assert [(m["number"], m["result"]) for m in events(root, "merge")] == [(2, "merged")]
    prompt = (root / ".automaker" / starts[1]["prompt_file"].removeprefix(".automaker/")
              ).read_text()
    assert "The validation gate is red" in prompt
    assert "the validation gate then had new failures" in prompt
    assert "aidd/f1 not queued: the gate in its worktree has new failures" in res.out
    assert not (root / "bad.txt").exists()
    assert (root / "f1.txt").is_file()
    for commit in git(root, "rev-list", "--first-parent", "main").split():
        assert "bad.txt" not in git(root, "ls-tree", "--name-only", commit)


def test_a_red_merged_gate_is_undone_and_the_feature_sent_back(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path) -> None:
    """The agent leaves `bad.txt`, which the gate refuses in the project's checkout only (its
    environment differs from a worktree's): green in the slot's worktree, the merge is undone
    (the project's branch and checkout back where they were), reason `merge_red`; the next
    attempt removes it and the merge is kept."""
    fake_agent.script(WORK_BAD, FIX, REVIEW)
    root = git_project(tmp_path / "proj", ["f1"])
    before = git(root, "rev-parse", "HEAD").strip()
    res = run_aidd("--project-dir", str(root), "--parallel", "2", "--gate",
                   f'test "$(pwd -P)" != {root.resolve()} || test ! -e bad.txt', *LIMITS,
                   env=env, timeout=120)
    assert res.code == 73, res.err + res.out
    validate_file(root)
    merges = [(m["result"], m["reason"], m["commit"]) for m in events(root, "merge")]
    assert merges[0] == ("merge_red", "merge_red", None)
    assert merges[1][0] == "merged"
    assert not (root / "bad.txt").exists()
    log = git(root, "log", "--first-parent", "--format=%H %s", "main").splitlines()
    assert [line.split()[0] for line in log][-1] == before
    assert len(log) == 2  # the red merge left no trace on the project's branch


def test_a_merged_gate_cut_short_by_a_stop_never_keeps_the_merge(
        env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path) -> None:
    """`.stop` while the gate judges a merged result in the project: the gate judged nothing,
    so the merge is undone (reason `merge_red`, the gate "was stopped"), never kept ungated;
    the branch stays for the next run, exit 6."""
    fake_agent.script(WORK, REVIEW)
    root = git_project(tmp_path / "proj", ["f1"])
    judging = tmp_path / "judging"
    gate = (f'if test "$(pwd -P)" = {root.resolve()} && test -e f1.txt; then '
            f'touch {judging}; sleep 30; fi')
    with started(env, tmp_path, "--project-dir", str(root), "--parallel", "2", "--gate", gate,
                 *WIDE_LIMITS) as run:
        wait_for(judging.exists, 60, "the gate on the merged result")
        (root / ".automaker" / ".stop").write_text("now\n")
        assert run.wait(timeout=60) == 6, console(tmp_path)
    (merge,) = events(root, "merge")
    assert (merge["result"], merge["why"]) == ("merge_red",
                                              "the gate on the merged result was stopped")
    assert not (root / "f1.txt").exists()
    assert "f1.txt" in git(root, "ls-tree", "--name-only", "aidd/f1")
    assert len(git(root, "log", "--format=%H", "main").split()) == 1


def test_a_budget_stop_stops_every_agent(run_aidd: RunAidd, env: dict[str, str],
                                         fake_agent: FakeAgent, tmp_path: Path) -> None:
    """Each attempt costs $1 and finishes nothing; with --max-cost-usd 0.5 the first attempt
    to end spends it: no attempt starts after the two running, exit 9, both branches kept."""
    fake_agent.script(COSTLY)
    root = git_project(tmp_path / "proj", ["f1", "f2", "f3"])
    res = run_aidd("--project-dir", str(root), "--parallel", "2", "--max-cost-usd", "0.5",
                   *LIMITS, env=env, timeout=120)
    assert res.code == 9, res.err + res.out
    validate_file(root)
    assert len(fake_agent.records()) == 2
    (end,) = events(root, "run_end")
    assert end["reason"] == "budget"
    branches = git(root, "branch", "--format=%(refname:short)").split()
    assert sorted(b for b in branches if b.startswith("aidd/")) == ["aidd/f1", "aidd/f2"]
    assert git(root, "worktree", "list").count("\n") == 1


def _killed_mid_work(env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path,
                     root: Path) -> None:
    """aidd at --parallel 2, killed with SIGKILL once both agents did half their work."""
    with started(env, tmp_path, "--project-dir", str(root), "--parallel", "2",
                 *WIDE_LIMITS) as first:
        wait_for(lambda: len(fake_agent.records()) == 2, 30, "both agents to start")
        halves = [Path(r["cwd"]) / f"{Path(r['cwd']).name}.half" for r in fake_agent.records()]
        wait_for(lambda: all(h.exists() for h in halves), 20, "both agents' half work")
        first.kill()
        first.wait(timeout=10)


def test_after_a_kill_9_the_next_run_keeps_the_unmerged_work_and_finishes(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path) -> None:
    """aidd killed with SIGKILL while two agents work: the agents die with it; the next start
    commits what each worktree held on its branch, removes the worktrees, names the kept
    branches, and each feature's next attempt resumes on its branch, to the end (73)."""
    fake_agent.script(HALF, HALF, WORK, WORK, REVIEW)
    root = git_project(tmp_path / "proj", ["f1", "f2"])
    _killed_mid_work(env, fake_agent, tmp_path, root)
    for record in fake_agent.records():
        wait_for(lambda r=record: not running(r["pid"]), 10, "the agents' end with aidd")
    res = run_aidd("--project-dir", str(root), "--parallel", "2", *LIMITS, env=env, timeout=120)
    assert res.code == 73, res.err + res.out + console(tmp_path)
    first_run, cleaned = events(root, "worktrees_cleaned")
    assert first_run["kept"] == first_run["removed"] == []
    assert sorted(cleaned["kept"]) == ["aidd/f1", "aidd/f2"]
    assert sorted(Path(p).name for p in cleaned["removed"]) == ["f1", "f2"]
    assert "unmerged branches of a stopped run kept" in res.out
    resumed = [e for e in events(root, "iteration_start") if "slot" in e][2:]
    assert len(resumed) == 2
    for start in resumed:  # each slot's log header names them
        assert ("[aidd] Kept branches (a stopped run's unmerged work): aidd/f1, aidd/f2\n"
                in (root / start["log"]).read_text())
    for fid in ("f1", "f2"):
        assert (root / f"{fid}.half").read_text() == "half\n"  # the killed run's work, merged
        assert (root / f"{fid}.txt").is_file()


def test_a_run_without_parallel_after_a_kill_9_names_the_kept_work(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path) -> None:
    """The night killed at --parallel 2 is restarted without it: the single run cleans up as
    the slots would (the worktrees committed and removed, the unmerged branches kept and named
    in its header), then works in the project's checkout. Before, the worktrees stayed and
    nothing said where the half-done work was."""
    fake_agent.script(HALF, HALF, REVIEW)
    root = git_project(tmp_path / "proj", ["f1", "f2"])
    _killed_mid_work(env, fake_agent, tmp_path, root)
    res = run_aidd("--project-dir", str(root), "--max-iterations", "1", *LIMITS, env=env,
                   timeout=120)
    assert res.code == 0, res.err + res.out + console(tmp_path)
    (cleaned,) = [e for e in events(root, "worktrees_cleaned") if e["kept"]]
    assert sorted(cleaned["kept"]) == ["aidd/f1", "aidd/f2"]
    assert "unmerged branches of a stopped run kept" in res.out
    (start,) = [e for e in events(root, "iteration_start") if "slot" not in e]
    assert ("[aidd] Kept branches (a stopped run's unmerged work): aidd/f1, aidd/f2\n"
            in (root / start["log"]).read_text())
    assert git(root, "worktree", "list").count("\n") == 1  # the project's own
    for fid in ("f1", "f2"):  # the half work, on its branch
        assert git(root, "show", f"aidd/{fid}:{fid}.half") == "half\n"


def test_worktrees_inside_the_project_are_refused(run_aidd: RunAidd, env: dict[str, str],
                                                  fake_agent: FakeAgent, tmp_path: Path) -> None:
    fake_agent.script(WORK)
    root = git_project(tmp_path / "proj", ["f1"])
    res = run_aidd("--project-dir", str(root), "--parallel", "2", "--worktree-dir",
                   str(root / "trees"), *LIMITS, env=env)
    assert res.code == 2
    assert res.err.count("\n") == 1
    assert "--worktree-dir: worktrees cannot live inside the project" in res.err
    assert fake_agent.records() == []
    assert not (root / "trees").exists()


def test_a_rate_limit_seen_by_one_agent_pauses_every_slot(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path) -> None:
    """One agent is rate limited (the fallback: 3 s) while the other finishes: no attempt
    starts and nothing is merged until the sleep ends; then the limited one's feature is
    worked again, to the end."""
    limited: list[dict[str, Any]] = [
        {"init": True}, {"error": {"name": "APIError", "message": "rate limit exceeded"}}]
    fake_agent.script(limited, WORK, WORK, REVIEW)
    root = git_project(tmp_path / "proj", ["f1", "f2"])
    res = run_aidd("--project-dir", str(root), "--parallel", "2", "--rate-limit-fallback", "3",
                   *LIMITS, env=env, timeout=120)
    assert res.code == 73, res.err + res.out
    validate_file(root)
    (sleep,) = events(root, "rate_limit_sleep")
    asleep = datetime.fromisoformat(sleep["ts"])
    awake = asleep + timedelta(seconds=sleep["seconds"])
    during = [e for e in events(root) if e["event"] in ("iteration_start", "merge")
              and asleep < datetime.fromisoformat(e["ts"]) < awake]
    assert during == []
    assert sorted(m["feature"] for m in events(root, "merge")) == ["f1", "f2"]
    assert sleep["feature"] in ("f1", "f2")
    assert (root / ".automaker" / "iterations" / f"{sleep['number']:03d}.ratelimited.log"
            ).is_file()


def test_a_stop_request_ends_every_slot_after_its_attempt(
        env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path) -> None:
    """`.stop` while two agents work: both attempts run to their end, no attempt starts after
    them, exit 6; each slot's work is committed on its kept branch."""
    wait = {"wait_file": "go", "timeout": 30}
    slow = [READ, {"spawn": ["sh", "-c", "echo x > \"$(basename \"$PWD\").part\""],
                   "wait": True}, wait, {"say": "done"}, {"finish": True}]
    fake_agent.script(slow, slow, WORK)
    root = git_project(tmp_path / "proj", ["f1", "f2", "f3"])
    with started(env, tmp_path, "--project-dir", str(root), "--parallel", "2",
                 *WIDE_LIMITS) as run:
        wait_for(lambda: len(fake_agent.records()) == 2, 30, "both agents to start")
        trees = [Path(r["cwd"]) for r in fake_agent.records()]
        wait_for(lambda: all((t / f"{t.name}.part").exists() for t in trees), 20, "work")
        (root / ".automaker" / ".stop").write_text("now\n")
        wait_for(lambda: events(root, "stop_requested"), 20, "the stop to be noticed")
        for tree in trees:
            (tree / "go").write_text("")
        assert run.wait(timeout=60) == 6, console(tmp_path)
    assert len(fake_agent.records()) == 2
    ends = events(root, "iteration_end")
    assert sorted(e["feature"] for e in ends) == ["f1", "f2"]
    assert {e["result"] for e in ends} == {0}
    for tree in trees:
        branch = f"aidd/{tree.name}"
        assert f"{tree.name}.part" in git(root, "ls-tree", "--name-only", branch)
        assert not tree.exists()


def test_a_slot_s_agent_changing_files_in_its_worktree_is_alive(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path) -> None:
    """--liveness signals: a slot's agent that prints nothing while it writes files in its
    worktree (outside the project, which the run's own watch covers) for 4 s is not killed
    at --idle-timeout 2: each worktree has its own watch."""
    steps: list[dict[str, Any]] = [{"init": True}]
    for i in range(8):
        steps += [{"write_file": f"w{i}.txt", "text": "x"}, {"sleep": 0.5}]
    fake_agent.script([*steps, *WORK], REVIEW)
    root = git_project(tmp_path / "proj", ["f1"])
    res = run_aidd("--project-dir", str(root), "--parallel", "2", "--idle-timeout", "2",
                   "--idle-nudge-timeout", "0", "--timeout", "30", "--busy-timeout", "20",
                   env=env, timeout=120)
    assert res.code == 73, res.err + res.out
    assert events(root, "kill") == []
    assert [(m["feature"], m["result"]) for m in events(root, "merge")] == [("f1", "merged")]
    assert (root / "w7.txt").is_file()
