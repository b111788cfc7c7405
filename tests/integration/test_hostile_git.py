"""A hostile repository against the real aidd (issue 27): every git key that starts a program
(filter clean, smudge and process, diff textconv and command, diff.external, gpg.program with
log.showSignature and a signed commit, commit.gpgSign, core.fsmonitor, core.hooksPath and the
hooks folder, core.sshCommand, core.askPass, core.pager, credential.helper, an include.path
naming more) planted in the project's .git/config, in a private checkpoint repository (with
commondir, alternates and a linked refs folder) or in a repository outside the project that
`.git` leads to. `--doctor`, a run with checkpoints, `--rollback` and `--report` (text, JSON,
HTML) run none of those programs and write nothing outside the project."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.gitrepo import git
from tests.integration.runs import LIMITS, READ, RunAidd
from tests.planted import hostile_attributes, hostile_git_config, signed_commit

KINDS = ["git", "private", "linked-git", "gitdir-file"]
FILES = {"a.txt": b"line\r\nbytes \x00\n", "b.py": b"print(1)\n", "d.md": b"# doc\n"}


def committed(folder: Path) -> None:
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "first")


def hostile(tmp_path: Path, kind: str) -> tuple[Path, Path, Path]:
    """(project, markers, outside): the project of `kind`; where planted programs leave their
    marker; the folder holding everything planted outside the project."""
    outside, markers = tmp_path / "outside", tmp_path / "markers"
    programs = outside / "programs"
    root = tmp_path / "shop"
    root.mkdir()
    for name, data in FILES.items():
        (root / name).write_bytes(data)
    hostile_attributes(root)
    feature(root, description="d")  # failing: the run does not end by completion
    if kind == "git":
        committed(root)
        hostile_git_config(root / ".git", programs, markers)
        signed_commit(root, {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"})
    elif kind == "private":
        auto = root / ".automaker"
        for name in ("checkpoints.git", "common.git"):
            git(tmp_path, "init", "-q", "--bare", str(auto / name))
            hostile_git_config(auto / name, programs, markers)
        (auto / "checkpoints.git" / "commondir").write_text("../common.git\n")
        elsewhere = outside / "elsewhere.git"
        git(tmp_path, "init", "-q", "--bare", str(elsewhere))
        (auto / "checkpoints.git" / "objects" / "info" / "alternates").write_text(
            f"{elsewhere / 'objects'}\n")
        (auto / "common.git" / "refs" / "aidd").symlink_to(elsewhere / "refs")
    else:
        other = outside / "other"
        other.mkdir(parents=True)
        (other / "x.txt").write_text("x\n")
        committed(other)
        hostile_git_config(other / ".git", programs, markers)
        if kind == "linked-git":
            (root / ".git").symlink_to(other / ".git")
        else:
            (root / ".git").write_text(f"gitdir: {other / '.git'}\n")
    return root, markers, outside


def state(folder: Path) -> dict[str, str]:
    """Every entry under `folder`: a file's bytes, a link's target, a folder."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        out[rel] = (f"-> {os.readlink(path)}" if path.is_symlink() else
                    path.read_bytes().hex() if path.is_file() else "dir")
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_a_hostile_repository_runs_nothing_and_gets_nothing_written_outside(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path,
        kind: str) -> None:
    root, markers, outside = hostile(tmp_path, kind)
    before = state(outside)
    refused = kind in ("linked-git", "gitdir-file")
    at = ("--project-dir", str(root))

    doctor = run_aidd(*at, "--doctor", env=env)
    assert bool(re.search(r"checkpoints +off: ", doctor.out)) == refused, doctor.out
    fake_agent.script([{"write_file": "a.txt", "text": "wrecked\n"},
                       {"write_file": "b.py", "text": "wrecked\n"}, READ, {"say": "done"},
                       {"finish": True}])
    ran = run_aidd(*at, "--max-iterations", "1", *LIMITS, env=env)
    assert ran.code == 0, ran.err
    assert ("checkpoints off" in ran.out + ran.err) == refused
    header = next((root / ".automaker" / "iterations").glob("001*.log")).read_text()
    assert ("checkpoints off (refused" in header) == refused
    back = run_aidd(*at, "--rollback", "001", env=env)
    if refused:
        assert back.code != 0
    else:
        assert back.code == 0, back.err
        assert {name: (root / name).read_bytes() for name in FILES} == FILES
    report = run_aidd(*at, "--report", env=env)
    assert report.code == 0, report.err
    assert ("Checkpoints: refused" in report.out) == refused
    as_json = run_aidd(*at, "--report", "--json", env=env)
    assert (json.loads(as_json.out)["checkpoints"]["refused"] is not None) == refused
    kinds = [r["kind"] for r in json.loads(as_json.out)["health"]["reasons"]]
    assert ("checkpoints_off" in kinds) == refused  # the health verdict names it (issue 28)
    page = run_aidd(*at, "--report", "--html", str(tmp_path / "report.html"), env=env)
    assert page.code == 0, page.err

    assert sorted(p.name for p in markers.iterdir()) == []
    assert state(outside) == before
