"""Runtime files left out of `git add` by patterns git never refuses, whether or not the
user's .gitignore hides them (issue 33: no check-ignore needed for them)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from aidd.project.gitrules import exclusions, rules_key
from tests.gitrepo import git

RUNTIME = (".automaker/iterations", ".automaker/aidd.lock")


@pytest.mark.parametrize("ignore", ["", ".automaker/\n", ".automaker/iterations\n"])
def test_runtime_files_stay_out_whatever_is_ignored(tmp_path: Path, ignore: str) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text(ignore)
    (tmp_path / ".automaker" / "iterations").mkdir(parents=True)
    (tmp_path / ".automaker" / "iterations" / "001.log").write_text("log\n")
    (tmp_path / ".automaker" / "aidd.lock").write_text("1\n")
    (tmp_path / ".automaker" / "todo.md").write_text("- [ ] a\n")
    (tmp_path / "app.py").write_text("x\n")
    index = tmp_path / "checkpoint.index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    subprocess.run(["git", "add", "-A", "--", ".", *exclusions(RUNTIME, ["**/.tmp-*"])],
                   cwd=tmp_path, env=env, check=True, capture_output=True)
    names = subprocess.run(["git", "ls-files"], cwd=tmp_path, env=env, check=True,
                           capture_output=True, text=True).stdout.split()
    assert "app.py" in names
    assert not any(n.startswith(RUNTIME) for n in names)
    assert (".automaker/todo.md" in names) == (ignore == "" or "iterations" in ignore)


def test_the_rules_key_changes_with_a_gitignore_on_the_way(tmp_path: Path) -> None:
    project = tmp_path / "sub"
    (project / ".automaker").mkdir(parents=True)
    before = rules_key(project, tmp_path, tmp_path / ".git", [])
    (tmp_path / ".gitignore").write_text("sub/.automaker/\n")  # above the project
    assert rules_key(project, tmp_path, tmp_path / ".git", []) != before
    before = rules_key(project, tmp_path, tmp_path / ".git", [])
    (tmp_path / "x.ignore").write_text("todo.md\n")
    named = [("local", "core.excludesFile", "x.ignore")]
    assert rules_key(project, tmp_path, tmp_path / ".git", named) != before
