"""Benchmark what checkpoints add to one attempt, beside the floor of snapshotting the tree.

    python bench/checkpoint_bench.py [--quick]

A 1,000-file project (20 folders of 50 files), in a git repository and in a plain directory.
One attempt's checkpoints = `NNN` before the agent (the tree as the previous attempt left it)
plus `NNN-end` after it changed one file, through `CheckpointStore` as a run makes them. The
floor is what any snapshot of the tree costs: `git add -A && git write-tree` into an index of
its own (plain: a repository outside the tree). Target: <= 50 ms per attempt (issue 15).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from aidd.project.checkpoints import CheckpointStore
from bench.common import WORK, Result, print_results

FILES = 1000
TARGET_S = 0.050
_ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x",
        "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}


def project(base: Path, with_git: bool) -> Path:
    root = base / ("git" if with_git else "plain")
    for i in range(FILES):
        folder = root / f"d{i % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}.txt").write_text(f"line {i}\n" * 20)
    (root / ".automaker" / "features").mkdir(parents=True)
    if with_git:
        for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
            subprocess.run(["git", *argv], cwd=root, env=_ENV, check=True, capture_output=True)
    return root


def measure(root: Path, with_git: bool, repeat: int) -> tuple[list[float], list[float]]:
    store = CheckpointStore(root, "bench", os.environ)
    store.record("000-end")
    floor_env = {**_ENV, "GIT_INDEX_FILE": str(root.parent / f"floor-{root.name}.index")}
    if not with_git:
        floor_repo = root.parent / f"floor-{root.name}.git"
        subprocess.run(["git", "init", "-q", "--bare", str(floor_repo)], check=True)
        floor_env.update(GIT_DIR=str(floor_repo), GIT_WORK_TREE=str(root))
    floor = ["sh", "-c", "git add -A -- . ':(exclude).automaker' && git write-tree"]
    subprocess.run(floor, cwd=root, env=floor_env, check=True, capture_output=True)
    ours, floors = [], []
    for n in range(1, repeat + 1):
        start = time.perf_counter()
        store.record(f"{n:03d}")
        (root / "d1" / f"f{n}.txt").write_text(f"changed {n}\n")  # the agent's work
        store.record(f"{n:03d}-end")
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run(floor, cwd=root, env=floor_env, check=True, capture_output=True)
        floors.append(time.perf_counter() - start)
    return ours, floors


def run(quick: bool) -> list[Result]:
    WORK.mkdir(parents=True, exist_ok=True)
    results = []
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        for with_git in (True, False):
            ours, floors = measure(project(Path(tmp), with_git), with_git, 5 if quick else 20)
            kind = "git project" if with_git else "plain directory"
            median = sorted(ours)[len(ours) // 2]
            results.append(Result(
                group="checkpoints", case=f"one attempt's checkpoints, {FILES} files, {kind}",
                samples=ours, floor="`git add -A && git write-tree`, own index",
                floor_samples=floors, target=f"<= {TARGET_S * 1000:.0f} ms",
                met=median <= TARGET_S,
                note="NNN (unchanged tree, no file watcher here: one add) + NNN-end (one file "
                     "changed: one add; its trees, commit and ref written by aidd)"))
    return results


if __name__ == "__main__":
    print_results(run(quick="--quick" in sys.argv))
