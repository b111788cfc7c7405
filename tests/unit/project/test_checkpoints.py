"""Checkpoints with real git: the whole work tree under a private ref, in a git project and in
a plain directory, and the user's HEAD, branch, index and stash never touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aidd.project.checkpoints import CheckpointError, CheckpointStore
from aidd.project.git import Done, Git
from tests.gitrepo import git
from tests.planted import plant

RUN = "20261125T010000Z-42"



def files_at(root: Path, ref: str, git_dir: Path | None = None) -> dict[str, str]:
    """path -> content of every file in the checkpoint."""
    where = ["--git-dir", str(git_dir)] if git_dir else []
    names = git(root, *where, "ls-tree", "-r", "--name-only", ref).split()
    return {n: git(root, *where, "show", f"{ref}:{n}") for n in names}


def user_state(root: Path) -> tuple[str, ...]:
    return (git(root, "rev-parse", "HEAD"), git(root, "symbolic-ref", "HEAD"),
            git(root, "diff", "--cached"), git(root, "stash", "list"),
            git(root, "status", "--porcelain"), git(root, "for-each-ref", "refs/heads"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("build/\n.automaker/\n")
    (root / "app.py").write_text("print('v1')\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    (root / "app.py").write_text("print('v2')\n")  # modified, unstaged
    (root / "staged.py").write_text("staged\n")
    git(root, "add", "staged.py")  # in the user's index only
    (root / "new.py").write_text("untracked\n")
    (root / "build").mkdir()
    (root / "build" / "out.bin").write_text("ignored\n")
    (root / "big.py").write_text("stash me\n")
    git(root, "stash", "push", "-q", "--include-untracked", "--", "big.py")  # a stash to keep
    automaker = root / ".automaker"
    (automaker / "features" / "feature-1-a").mkdir(parents=True)
    (automaker / "features" / "feature-1-a" / "feature.json").write_text('{"id": 1}\n')
    (automaker / "iterations").mkdir()
    (automaker / "iterations" / "001.log").write_text("runtime\n")
    (automaker / "events.jsonl").write_text("{}\n")
    return root


def test_a_git_project_is_recorded_whole_without_touching_the_user(repo: Path) -> None:
    before = user_state(repo)
    point = CheckpointStore(repo, RUN, os.environ).record("001")
    assert user_state(repo) == before
    assert point.ref == f"refs/aidd/checkpoints/{RUN}/001"
    files = files_at(repo, point.ref)
    assert files["app.py"] == "print('v2')\n"  # the work tree, not HEAD
    assert files["new.py"] == "untracked\n"
    assert files["staged.py"] == "staged\n"
    assert files[".automaker/features/feature-1-a/feature.json"] == '{"id": 1}\n'
    assert "build/out.bin" not in files  # ignored
    assert not any(n.startswith((".automaker/iterations", ".automaker/events")) for n in files)
    assert "big.py" not in files  # stashed, so not in the work tree
    assert point.files == 4  # app.py, new.py, staged.py and the feature, against HEAD
    assert git(repo, "log", "--format=%an", "-1", point.commit).strip() == "aidd"


def test_checkpoints_chain_and_count_what_changed(repo: Path) -> None:
    store = CheckpointStore(repo, RUN, os.environ)
    first = store.record("001")
    (repo / "new.py").write_text("changed\n")
    (repo / "app.py").unlink()
    second = store.record("001-end")
    assert second.files == 2
    assert git(repo, "rev-parse", f"{second.commit}^").strip() == first.commit
    assert "app.py" not in files_at(repo, second.ref)
    same = store.record("002")  # nothing changed: the same commit, and the listing says 0
    assert (same.commit, same.files) == (second.commit, 0)
    assert [(row.label, row.files) for row in store.listing()] == [
        ("001", first.files), ("001-end", 2), ("002", 0)]


def _git_runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The arguments of every git run from now on."""
    runs: list[tuple[str, ...]] = []
    real = Git.run

    def run(self: Git, *args: str, stdin: bytes | None = None) -> Done:
        runs.append(args)
        return real(self, *args, stdin=stdin)

    monkeypatch.setattr(Git, "run", run)
    return runs


def test_the_ignore_rules_are_asked_again_only_after_a_rules_file_changed(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / ".gitignore").write_text("build/\n")  # the metadata is not hidden
    runs = _git_runs(monkeypatch)
    store = CheckpointStore(repo, RUN, os.environ)
    store.record("001")
    store.record("001-end")
    assert [r[0] for r in runs].count("check-ignore") == 1  # one git run fewer a checkpoint
    (repo / ".gitignore").write_text("build/\n.automaker/\n")  # now it is
    (repo / "app.py").write_text("print('v3')\n")
    point = store.record("002")
    assert [r[0] for r in runs].count("check-ignore") == 2
    assert ".automaker/features/feature-1-a/feature.json" in files_at(repo, point.ref)
    assert not any(n.startswith(".automaker/iterations") for n in files_at(repo, point.ref))


def test_the_repository_is_found_once_a_run(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: a run's first checkpoint prunes the old runs (`exists`, then `repo`), then
    records: the project's repository is asked for once, not at each question."""
    runs = _git_runs(monkeypatch)
    store = CheckpointStore(repo, RUN, os.environ)
    assert store.refusal() is None
    store.prune(3)
    store.record("001")
    assert [r[0] for r in runs].count("rev-parse") == 1


def test_a_checkpoint_reads_head_from_the_repository_files(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _git_runs(monkeypatch)
    point = CheckpointStore(repo, RUN, os.environ).record("001")
    assert point.head == git(repo, "rev-parse", "HEAD").strip()
    assert not [r for r in runs if "HEAD^{commit}" in r]  # no git run for it


def test_what_an_attempt_changed_comes_from_its_end_checkpoint_without_git(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = CheckpointStore(repo, RUN, os.environ)
    start = store.record("001")
    (repo / "new.py").write_text("changed\n")
    end = store.record("001-end")
    runs = _git_runs(monkeypatch)
    assert store.changed_paths(start, end) == ["new.py"]
    assert runs == []


@pytest.mark.parametrize("with_git", [True, False], ids=["git", "plain"])
def test_each_checkpoint_has_its_ref(
        repo: Path, tmp_path: Path, with_git: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each label its own ref, an unchanged tree naming the same commit; aidd writes the refs
    and the commits itself (issue 33: no update-ref, no commit-tree)."""
    root = repo if with_git else tmp_path / "plain"
    root.mkdir(exist_ok=True)
    (root / "a.txt").write_text("a\n")
    runs = _git_runs(monkeypatch)
    store = CheckpointStore(root, RUN, os.environ)
    first = store.record("001")
    (root / "a.txt").write_text("b\n")
    end = store.record("001-end")
    again = store.record("002")  # the tree unchanged: the same commit, a ref of its own
    assert not {"update-ref", "commit-tree"} & {r[0] for r in runs}
    assert [(c.label, c.commit) for c in store.listing()] == [
        ("001", first.commit), ("001-end", end.commit), ("002", end.commit)]
    assert again.commit == end.commit


def test_a_plain_directory_gets_a_private_repository(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.txt").write_text("a\n")
    (root / ".automaker" / "iterations").mkdir(parents=True)
    (root / ".automaker" / "todo.md").write_text("- [ ] x\n")
    point = CheckpointStore(root, RUN, os.environ).record("001")
    private = root / ".automaker" / "checkpoints.git"
    assert private.is_dir()
    assert not (root / ".git").exists()
    files = files_at(root, point.ref, private)
    assert files == {"src/a.txt": "a\n", ".automaker/todo.md": "- [ ] x\n"}


def test_a_project_in_a_subdirectory_records_only_its_own_changes(repo: Path) -> None:
    sub = repo / "packages" / "web"
    sub.mkdir(parents=True)
    (sub / "index.js").write_text("js\n")
    point = CheckpointStore(sub, RUN, os.environ).record("001")
    files = files_at(repo, point.ref)
    assert files["packages/web/index.js"] == "js\n"
    assert files["app.py"] == "print('v1')\n"  # outside the project: as the user's index has it
    assert "new.py" not in files


def test_a_move_is_a_change_outside_automaker_or_a_new_head(repo: Path) -> None:
    """What the stuck check reads from an attempt's two checkpoints (issue 33): the metadata
    and files outside the project (staged in the user's index) are no move; a commit is."""
    sub = repo / "packages" / "web"
    (sub / ".automaker" / "features" / "f").mkdir(parents=True)
    (sub / "index.js").write_text("js\n")
    store = CheckpointStore(sub, RUN, os.environ)
    start = store.record("001")
    (sub / ".automaker" / "features" / "f" / "feature.json").write_text("{}\n")
    (repo / "other.py").write_text("outside\n")
    git(repo, "add", "other.py")
    end = store.record("001-end")
    assert end.tree != start.tree
    assert not store.moved(start, end)
    git(repo, "commit", "-qm", "the agent's commit")
    again = store.record("002")
    assert store.moved(end, again)
    (sub / "index.js").write_text("js 2\n")
    assert store.moved(again, store.record("002-end"))


def test_without_git_a_checkpoint_fails_with_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="git not found"):
        CheckpointStore(tmp_path, RUN, {"PATH": str(tmp_path)}).record("001")


def test_a_project_its_enclosing_repository_ignores_gets_a_private_one(repo: Path) -> None:
    (repo / ".gitignore").write_text("build/\n.automaker/\nscratch/\n")
    root = repo / "scratch" / "proj"
    root.mkdir(parents=True)
    (root / "a.txt").write_text("a\n")
    point = CheckpointStore(root, RUN, os.environ).record("001")
    private = root / ".automaker" / "checkpoints.git"
    assert files_at(root, point.ref, private) == {"a.txt": "a\n"}
    assert git(repo, "for-each-ref", "refs/aidd") == ""


@pytest.mark.parametrize("with_git", [True, False], ids=["git", "plain"])
@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_a_planted_index_is_neither_written_through_nor_waited_on(
        repo: Path, tmp_path: Path, kind: str, with_git: bool) -> None:
    root = repo if with_git else tmp_path / "plain"
    (root / ".automaker").mkdir(parents=True, exist_ok=True)
    (root / "a.txt").write_text("a\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    plant(root / ".automaker" / "checkpoints.index", kind, outside)
    point = CheckpointStore(root, RUN, os.environ).record("001")
    where = None if with_git else root / ".automaker" / "checkpoints.git"
    assert files_at(root, point.ref, where)["a.txt"] == "a\n"
    assert outside.read_text() == "precious\n"


def test_a_private_repository_planted_as_a_link_is_moved_aside(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / ".automaker").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere.git"
    git(tmp_path, "init", "-q", "--bare", str(elsewhere))
    private = root / ".automaker" / "checkpoints.git"
    private.symlink_to(elsewhere)
    point = CheckpointStore(root, RUN, os.environ).record("001")
    assert not private.is_symlink()
    assert files_at(root, point.ref, private) == {}
    assert git(tmp_path, "--git-dir", str(elsewhere), "for-each-ref") == ""
    aside = [p for p in (root / ".automaker").iterdir() if p.name.startswith("checkpoints.git.")]
    assert [a.readlink() for a in aside] == [elsewhere]  # the link itself, moved


def test_a_copied_private_repository_cannot_make_git_run_its_filters(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / ".automaker").mkdir(parents=True)
    private = root / ".automaker" / "checkpoints.git"
    git(tmp_path, "init", "-q", "--bare", str(private))
    ran = tmp_path / "filter-ran"
    with (private / "config").open("a") as config:
        config.write(f'[filter "evil"]\n\tclean = touch {ran}; cat\n')
    (root / ".gitattributes").write_text("* filter=evil\n")
    (root / "a.txt").write_text("a\n")
    point = CheckpointStore(root, RUN, os.environ).record("001")
    assert files_at(root, point.ref, private)["a.txt"] == "a\n"
    assert not ran.exists()
