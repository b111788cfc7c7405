"""Benchmark a `--parallel N` slot's worktree (issue 29): made, committed and removed, beside
the floor of git doing the same alone.

    python bench/worktree_bench.py [--quick]

A 1,000-file project (20 folders of 50 files) in a git repository with 10 feature files under
an ignored `.automaker/`. One slot's worktree = `Worktrees.create` (branch `aidd/<id>` and the
checkout), `seed` (the feature files copied in), `commit` after the agent changed one file,
and `remove`, as the run makes them. The floor: `git worktree add -b`, `git commit -a` and
`git worktree remove --force`, plain git without aidd's isolation.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from aidd.project.worktrees import Worktrees
from bench.common import WORK, Result, print_results

FILES = 1000
_ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x",
        "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}


def project(base: Path) -> Path:
    root = base / "project"
    for i in range(FILES):
        folder = root / f"d{i % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}.txt").write_text(f"line {i}\n" * 20)
    (root / ".gitignore").write_text(".automaker/\n")
    for i in range(10):
        feature = root / ".automaker" / "features" / f"f{i}" / "feature.json"
        feature.parent.mkdir(parents=True)
        feature.write_text(json.dumps({"id": f"f{i}", "category": "c", "description": "d"}))
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(["git", *argv], cwd=root, env=_ENV, check=True, capture_output=True)
    return root


def ours(trees: Worktrees, n: int) -> float:
    start = time.perf_counter()
    tree = trees.create(f"f{n}")
    trees.seed(tree)
    (tree.path / "d1" / "f1.txt").write_text(f"changed {n}\n")  # the agent's work
    trees.commit(tree, f"aidd: f{n}")
    trees.remove(tree)
    return time.perf_counter() - start


def floor(root: Path, base: Path, n: int) -> float:
    path = base / f"floor-{n}"
    start = time.perf_counter()
    subprocess.run(["git", "worktree", "add", "-q", "-b", f"floor/{n}", str(path)], cwd=root,
                   env=_ENV, check=True, capture_output=True)
    (path / "d1" / "f1.txt").write_text(f"changed {n}\n")
    subprocess.run(["git", "commit", "-qam", "work"], cwd=path, env=_ENV, check=True,
                   capture_output=True)
    subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=root, env=_ENV,
                   check=True, capture_output=True)
    return time.perf_counter() - start


def run(quick: bool) -> list[Result]:
    WORK.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        base = Path(tmp)
        root = project(base)
        trees = Worktrees(root, os.environ, base / "trees")
        samples, floors = [], []
        for n in range(5 if quick else 20):
            samples.append(ours(trees, n))
            floors.append(floor(root, base, n))
    return [Result(
        group="worktrees", case=f"one slot's worktree, {FILES} files: made, seeded, committed, "
                             "removed", samples=samples,
        floor="`git worktree add -b`, `commit -a`, `worktree remove`", floor_samples=floors,
        note="per feature a slot starts with --parallel N; the merge and the gate excluded")]


if __name__ == "__main__":
    print_results(run(quick="--quick" in sys.argv))
