"""aidd's git never obeys the project (issue 27, items 1-4, 9, 10): no program a repository's
config names runs in a checkpoint, a rollback, the doctor, the report or the fingerprint; a
repository whose layout leads outside the project keeps no checkpoint there; planted
checkpoint refs are never rolled back to, kept or pruned."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from aidd.config import Actions, load_settings
from aidd.doctor.gitcheck import check_git
from aidd.project import gitlayout
from aidd.project.checkpointnames import REF_ROOT
from aidd.project.checkpoints import CheckpointError, CheckpointStore
from aidd.project.fingerprint import fingerprint
from aidd.project.git import Git
from aidd.project.rollback import roll_back
from aidd.reports.morning.history import GitView
from tests.gitrepo import git, spy_git
from tests.planted import (
    hostile_attributes,
    hostile_git_config,
    marker_program,
    plant,
    signed_commit,
    within,
)

RUN = "20261125T010000Z-42"
FILES = {"a.txt": b"text \x00 bytes\r\n", "b.py": b"print(1)\n", "c.json": b"{}\n",
         "d.md": b"# doc\n"}


@pytest.fixture(autouse=True)
def _no_outer_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))


def hostile_project(tmp_path: Path, with_git: bool = True) -> tuple[Path, Path]:
    """A committed project whose repository config names a program for every executing key
    (planted after the commit: the test's own git would run them); returns (root, markers)."""
    root = tmp_path / "shop"
    root.mkdir()
    for name, data in FILES.items():
        (root / name).write_bytes(data)
    hostile_attributes(root)
    markers = tmp_path / "markers"
    if with_git:
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "first")
        hostile_git_config(root / ".git", tmp_path / "programs", markers)
    else:  # the private repository, as a copied project would carry it
        private = root / ".automaker" / "checkpoints.git"
        git(tmp_path, "init", "-q", "--bare", str(private))
        hostile_git_config(private, tmp_path / "programs", markers)
    return root, markers


def ran(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir()) if markers.exists() else []


@pytest.mark.parametrize("with_git", [True, False], ids=["git", "plain"])
def test_checkpoints_and_rollback_run_no_program_of_the_repository(
        tmp_path: Path, with_git: bool) -> None:  # finding 1
    root, markers = hostile_project(tmp_path, with_git)
    store = CheckpointStore(root, RUN, os.environ)
    store.record("001")
    for name in FILES:
        (root / name).write_bytes(b"wrecked\n")
    store.record("001-end")
    roll_back(CheckpointStore(root, "20261125T020000Z-43", os.environ), "001")
    assert ran(markers) == []
    assert {name: (root / name).read_bytes() for name in FILES} == FILES


def test_the_doctor_runs_no_program_of_the_repository(tmp_path: Path) -> None:  # finding 1
    root, markers = hostile_project(tmp_path)
    (root / "a.txt").write_bytes(b"changed\n")  # git status compares content: a clean filter
    settings = load_settings({"project-dir": root}, Actions(),
                             {**os.environ, "HOME": str(tmp_path / "home")}, cwd=tmp_path)
    found = {f.name: f.detail for f in check_git(settings)}
    assert "changed or untracked" in found["repository"]
    assert ran(markers) == []


def test_the_report_runs_no_gpg_program_of_the_repository(tmp_path: Path) -> None:  # finding 2
    root, markers = hostile_project(tmp_path)
    signed = signed_commit(root, {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"})
    view = GitView(CheckpointStore(root, "", os.environ))
    commits = view.commits_since(datetime.now(UTC) - timedelta(hours=1))
    assert signed in [c.sha for c in commits]
    assert ran(markers) == []


def test_a_planted_commondir_lends_the_private_repository_nothing(
        tmp_path: Path) -> None:  # finding 3
    root, markers = hostile_project(tmp_path, with_git=False)
    common = root / ".automaker" / "common.git"
    git(tmp_path, "init", "-q", "--bare", str(common))
    hostile_git_config(common, tmp_path / "programs", markers)
    private = root / ".automaker" / "checkpoints.git"
    (private / "commondir").write_text("../common.git\n")
    point = CheckpointStore(root, RUN, os.environ).record("001")
    assert ran(markers) == []
    assert not (private / "commondir").exists()  # made afresh; the planted one moved aside
    assert git(root, "--git-dir", str(private), "rev-parse", point.ref).strip() == point.commit
    assert git(root, "--git-dir", str(common), "for-each-ref") == ""


def outside_repo(tmp_path: Path, bare: bool = False) -> Path:
    """Another repository, outside the project: its git directory."""
    other = tmp_path / "outside" / "other"
    git(tmp_path, "init", "-q", *(["--bare"] if bare else []), str(other))
    return other if bare else other / ".git"


def state_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("kind", ["symlink", "gitdir", "alternates", "commondir"])
def test_a_git_dir_outside_the_project_keeps_no_checkpoint(
        tmp_path: Path, kind: str) -> None:  # finding 4
    other = outside_repo(tmp_path)
    root = tmp_path / "shop"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    if kind == "symlink":
        (root / ".git").symlink_to(other)
    elif kind == "gitdir":
        (root / ".git").write_text(f"gitdir: {other}\n")
    else:  # the project's own .git, borrowing another repository's objects or everything
        git(root, "init", "-q")
        (root / ".git" / "objects" / "info" / "alternates").write_text(f"{other / 'objects'}\n")
        if kind == "commondir":
            (root / ".git" / "commondir").write_text(f"{other}\n")
    before = state_of(other.parent)
    store = CheckpointStore(root, RUN, os.environ)
    with pytest.raises(CheckpointError, match="checkpoints off"):
        store.record("001")
    assert (store.refusal() or "").startswith("checkpoints off: ")
    assert store.prune(0) == []
    assert state_of(other.parent) == before
    assert not (root / ".automaker").exists()


@pytest.mark.parametrize("kind", ["objects", "refs", "alternates"])
def test_a_private_repository_leading_outside_is_made_afresh(
        tmp_path: Path, kind: str) -> None:  # finding 4
    other = outside_repo(tmp_path, bare=True)
    root = tmp_path / "shop"
    (root / ".automaker").mkdir(parents=True)
    (root / "a.txt").write_text("a\n")
    private = root / ".automaker" / "checkpoints.git"
    git(tmp_path, "init", "-q", "--bare", str(private))
    if kind == "alternates":
        (private / "objects" / "info" / "alternates").write_text(f"{other / 'objects'}\n")
    else:
        os.rename(private / kind, tmp_path / f"was-{kind}")
        (private / kind).symlink_to(other / kind)
    before = state_of(other.parent)
    point = CheckpointStore(root, RUN, os.environ).record("001")
    assert state_of(other.parent) == before
    assert not (private / "objects").is_symlink()
    assert not (private / "refs").is_symlink()
    assert not (private / "objects" / "info" / "alternates").exists()
    assert git(root, "--git-dir", str(private), "rev-parse", point.ref).strip() == point.commit


def test_the_fingerprint_runs_no_fsmonitor_of_the_repository(tmp_path: Path) -> None:  # 9
    root, markers = hostile_project(tmp_path)
    git(root, "config", "core.fsmonitor", marker_program(tmp_path / "programs", markers,
                                                          "fsmonitor-only"))
    fingerprint(root, os.environ)
    assert ran(markers) == []


def planted(root: Path, run: str, label: str = "001") -> None:
    """A checkpoint ref aidd never made: an empty tree, dated far in the future."""
    env = {**os.environ, "GIT_COMMITTER_DATE": "2099-01-01T00:00:00Z",
           "GIT_AUTHOR_NAME": "x", "GIT_AUTHOR_EMAIL": "x@x", "GIT_COMMITTER_NAME": "x",
           "GIT_COMMITTER_EMAIL": "x@x"}
    def run_git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, env=env, input="", text=True,
                              capture_output=True, check=True).stdout.strip()

    commit = run_git("commit-tree", run_git("mktree"), "-m", "planted")
    run_git("update-ref", f"{REF_ROOT}/{run}/{label}", commit)


def test_planted_refs_are_never_rolled_back_to_nor_kept(tmp_path: Path) -> None:  # finding 10
    root = tmp_path / "shop"
    root.mkdir()
    (root / "a.txt").write_text("precious\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    CheckpointStore(root, RUN, os.environ).record("001")
    for n in range(21):
        planted(root, f"2099{n:04d}T000000Z-{n}")  # well formed, in the future
        planted(root, f"zz-{n}")  # not a run id at all
    done = roll_back(CheckpointStore(root, "20261125T020000Z-43", os.environ), "001")
    assert done.target == f"{REF_ROOT}/{RUN}/001"
    assert (root / "a.txt").read_text() == "precious\n"
    pruned = CheckpointStore(root, "20261125T030000Z-44", os.environ).prune(2)
    assert pruned == []  # two real runs kept: the planted ones neither count nor go
    refs = git(root, "for-each-ref", "--format=%(refname)", REF_ROOT).split()
    assert f"{REF_ROOT}/{RUN}/001" in refs
    listed = {row.run for row in CheckpointStore(root, "", os.environ).listing()}
    assert listed == {RUN, "20261125T020000Z-43"}


@pytest.mark.parametrize("section", ['[include]', '[includeIf "gitdir:/"]', "[Include]"])
def test_a_config_include_of_a_fifo_is_refused_not_waited_on(tmp_path: Path,
                                                             section: str) -> None:
    """git opens every file the repository's config includes; a FIFO there stalled each of
    aidd's git runs (the fingerprint, the checkpoints) until its 60-120 s timeout. Now no git
    runs there: the fingerprint falls back to its own walk, the checkpoints are refused."""
    root, _ = hostile_project(tmp_path)
    fifo = plant(root / ".git" / "wait-here", "fifo")
    nested = root / ".git" / "more.inc"
    nested.write_text("[include]\n\tpath = wait-here ; a comment\n")
    with (root / ".git" / "config").open("a") as config:
        config.write(f"{section}\n\tpath = more.inc\n")
    plain = within(10, lambda: fingerprint(root, os.environ), fifo)
    assert plain == within(10, lambda: fingerprint(root, {**os.environ, "PATH": ""}), fifo)
    store = CheckpointStore(root, RUN, os.environ)
    with pytest.raises(CheckpointError, match="wait-here is not a regular file"):
        within(10, lambda: store.record("001"), fifo)


def test_an_include_of_a_regular_file_still_runs(tmp_path: Path) -> None:
    root, _ = hostile_project(tmp_path)
    (root / ".git" / "extra.inc").write_text("[core]\n\tautocrlf = false\n")
    with (root / ".git" / "config").open("a") as config:
        config.write('[include]\n\tpath = "extra.inc"\n\tpath = ~/absent.inc\n')
    store = CheckpointStore(root, RUN, os.environ)
    assert store.record("001").commit


def _listings(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Where `git config --list` ran from now on (the config files trusted at once)."""
    monkeypatch.setattr(gitlayout, "_RACY_NS", 0)
    return spy_git(monkeypatch, lambda git, argv: git.cwd if argv[1:2] == ["config"] else None)


@pytest.mark.parametrize("with_git", [True, False], ids=["git", "plain"])
def test_an_unchanged_config_is_listed_once_a_run(tmp_path: Path, with_git: bool,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 33: three `git config --list` an iteration were a third of its git runs."""
    root = tmp_path / "shop"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    if with_git:
        git(root, "init", "-q", "-b", "main")
    runs = _listings(monkeypatch)
    store = CheckpointStore(root, RUN, os.environ)
    for n in range(1, 4):
        store.record(f"{n:03d}")
        (root / "a.txt").write_text(f"change {n}\n")
        store.record(f"{n:03d}-end")
    assert len(runs) == 1


def test_a_driver_the_agent_adds_mid_run_is_still_emptied(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The listing is kept while the config files keep their stat; the agent's edit of one,
    an included one too, is listed again, and its filter never runs in aidd's git."""
    root = tmp_path / "shop"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    git(root, "init", "-q", "-b", "main")
    (root / ".git" / "extra.inc").write_text("[core]\n\tautocrlf = false\n")
    with (root / ".git" / "config").open("a") as config:
        config.write('[include]\n\tpath = extra.inc\n')
    hostile_attributes(root)
    runs = _listings(monkeypatch)
    store = CheckpointStore(root, RUN, os.environ)
    store.record("001")
    assert len(runs) == 1
    markers, programs = tmp_path / "markers", tmp_path / "programs"
    clean = marker_program(programs, markers, "clean")
    (root / ".git" / "extra.inc").write_text(f'[filter "x"]\n\tclean = {clean}\n')
    (root / "a.txt").write_text("agent's\n")
    store.record("001-end")
    assert len(runs) == 2
    with (root / ".git" / "config").open("a") as config:
        config.write(f'[filter "p"]\n\tprocess = {marker_program(programs, markers, "p")}\n')
    (root / "a.txt").write_text("agent's again\n")
    store.record("002")
    assert len(runs) == 3
    assert ran(markers) == []


def test_a_config_changed_just_now_is_listed_again(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Within its timestamp's granularity a file may change unseen by its stat: not trusted."""
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    runs = _listings(monkeypatch)
    monkeypatch.setattr(gitlayout, "_RACY_NS", 3_600 * 10**9)
    for _ in range(2):
        Git(root, os.environ).run("status")
    assert len(runs) == 2
