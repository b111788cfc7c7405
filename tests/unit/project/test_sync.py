"""copydirs.txt / copyfiles.txt (LAY-30..36, AC-85, AC-86)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aidd.project.copylists import ListSources, find_list
from aidd.project.mirror import EXCLUDED
from aidd.project.sync import Level, SyncResult, sync_lists, sync_project


@pytest.fixture
def env(tmp_path: Path) -> dict[str, Path]:
    dirs = {name: tmp_path / name for name in ("home", "aidd_home", "xdg", "project", "outside")}
    for d in dirs.values():
        d.mkdir()
    return dirs


def _sources(env: dict[str, Path], xdg: bool = False) -> ListSources:
    return ListSources(
        home=env["home"],
        aidd_home=env["aidd_home"],
        xdg_config_home=env["xdg"] if xdg else None,
        checkout=None,
    )


def _write(path: Path, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _sync(env: dict[str, Path], files: str = "", dirs: str = "") -> SyncResult:
    if files:
        _write(env["aidd_home"] / "copyfiles.txt", files)
    if dirs:
        _write(env["aidd_home"] / "copydirs.txt", dirs)
    return sync_project(env["project"], _sources(env))


def _warnings(result: SyncResult) -> list[str]:
    return [m.text for m in result.messages if m.level is Level.WARN]


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


# -- lookup (LAY-30) ---------------------------------------------------------------------------


def test_lookup_order_and_comment_only_files_count_as_absent(env: dict[str, Path]) -> None:
    checkout = env["home"] / "checkout"
    _write(env["aidd_home"] / "copydirs.txt", "# only a comment\n\n   \n")
    _write(checkout / "copydirs.txt", "# also only comments")
    xdg_list = _write(env["xdg"] / "aidd" / "copydirs.txt", "src")
    sources = ListSources(env["home"], env["aidd_home"], env["xdg"], checkout)
    found = find_list("copydirs.txt", sources)
    assert found is not None
    assert found[0] == xdg_list
    _write(checkout / "copydirs.txt", "other")
    assert find_list("copydirs.txt", sources) == (checkout / "copydirs.txt", [(1, "other")])
    _write(env["aidd_home"] / "copydirs.txt", "first")
    assert find_list("copydirs.txt", sources) == (env["aidd_home"] / "copydirs.txt", [(1, "first")])


def test_default_config_dir_is_home_dot_config(env: dict[str, Path]) -> None:
    listed = _write(env["home"] / ".config" / "aidd" / "copyfiles.txt", "a")
    sources = ListSources(env["home"], None, None, None)
    assert find_list("copyfiles.txt", sources) == (listed, [(1, "a")])


def test_each_list_is_looked_up_on_its_own(env: dict[str, Path]) -> None:
    _write(env["aidd_home"] / "copyfiles.txt", "f.txt")
    _write(env["aidd_home"] / "f.txt", "file")
    _write(env["xdg"] / "aidd" / "copydirs.txt", "d")
    _write(env["xdg"] / "aidd" / "d" / "inner.txt", "dir")
    result = sync_project(env["project"], _sources(env, xdg=True))
    assert (env["project"] / "f.txt").read_text() == "file"
    assert (env["project"] / "d" / "inner.txt").read_text() == "dir"
    assert (result.dirs, result.files, result.warnings) == (1, 1, 0)
    assert result.messages[-1].text == "synced 1 dirs, 1 files, 0 warnings"


def test_no_list_means_no_sync_and_no_messages(env: dict[str, Path]) -> None:
    result = sync_project(env["project"], _sources(env, xdg=True))
    assert result.messages == ()
    assert result.summary == "synced 0 dirs, 0 files, 0 warnings"


def test_project_dir_is_never_searched(env: dict[str, Path]) -> None:
    _write(env["project"] / "copyfiles.txt", "x")
    assert find_list("copyfiles.txt", _sources(env, xdg=True)) is None


def test_sync_lists_entry_point(env: dict[str, Path]) -> None:
    _write(env["aidd_home"] / "copyfiles.txt", "a.txt")
    _write(env["aidd_home"] / "a.txt", "A")
    result = sync_lists(
        env["project"], aidd_home=env["aidd_home"], xdg_config_home=env["xdg"], home=env["home"]
    )
    assert result.files == 1
    assert (env["project"] / "a.txt").read_text() == "A"


# -- copyfiles (AC-85) -------------------------------------------------------------------------


def test_copyfiles_basename_nested_target_relative_source(env: dict[str, Path]) -> None:
    _write(env["aidd_home"] / "rules" / "AGENTS.md", "agents")
    _write(env["home"] / "tilde.md", "tilde")
    absolute = _write(env["outside"] / "abs.md", "abs")
    listing = (
        "# comment line\n\n  rules/AGENTS.md  \n"
        "~/tilde.md -> a/b/c\n"
        f"{absolute} -> docs/abs.md\n"
        "  # indented comment"
    )
    result = _sync(env, files=listing)
    project = env["project"]
    assert (project / "AGENTS.md").read_text() == "agents"
    assert (project / "a" / "b" / "c").read_text() == "tilde"
    assert (project / "docs" / "abs.md").read_text() == "abs"
    assert (result.files, result.warnings) == (3, 0)
    assert not list(project.rglob(".aidd-tmp-*"))


def test_copyfiles_last_line_without_newline_counts(env: dict[str, Path]) -> None:
    _write(env["aidd_home"] / "a.txt", "A")
    _write(env["aidd_home"] / "b.txt", "B")
    result = _sync(env, files="a.txt\nb.txt")
    assert result.files == 2


def test_copyfiles_keeps_mode_and_overwrites(env: dict[str, Path]) -> None:
    src = _write(env["aidd_home"] / "run.sh", "#!/bin/sh\n")
    src.chmod(0o750)
    _write(env["project"] / "run.sh", "old")
    _sync(env, files="run.sh")
    target = env["project"] / "run.sh"
    assert target.read_text() == "#!/bin/sh\n"
    assert target.stat().st_mode & 0o777 == 0o750


def test_missing_source_warns_with_file_and_line(env: dict[str, Path]) -> None:
    result = _sync(env, files="# c\nnope.txt")
    listing = env["aidd_home"] / "copyfiles.txt"
    assert _warnings(result) == [
        f"{listing}:2: source {env['aidd_home'] / 'nope.txt'} does not exist, skipped"
    ]
    assert result.summary == "synced 0 dirs, 0 files, 1 warnings"


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("../out", "relative path without '..'"),
        ("a/../../out", "relative path without '..'"),
        ("/abs/out", "relative path without '..'"),
        (".", "project root"),
        (".git/config", "inside .git"),
        (".git", "inside .git"),
    ],
)
def test_unsafe_copyfiles_targets_are_refused(
    env: dict[str, Path], tmp_path: Path, target: str, reason: str
) -> None:
    _write(env["aidd_home"] / "x", "payload")
    _write(env["aidd_home"] / "copyfiles.txt", f"x -> {target}")
    (env["project"] / ".git").mkdir()
    before = _tree(tmp_path)
    result = sync_project(env["project"], _sources(env))
    listing = env["aidd_home"] / "copyfiles.txt"
    [warning] = _warnings(result)
    assert warning.startswith(f"{listing}:1: ")
    assert reason in warning
    assert _tree(tmp_path) == before
    assert not Path("/abs/out").exists()


def test_symlink_escape_is_refused(env: dict[str, Path]) -> None:
    _write(env["aidd_home"] / "x", "payload")
    (env["project"] / "link").symlink_to(env["outside"])
    result = _sync(env, files="x -> link/x\nx -> link")
    assert [w.split(": ", 1)[1] for w in _warnings(result)] == [
        "link/x: target resolves outside the project, skipped",
        "link: target resolves outside the project, skipped",
    ]
    assert list(env["outside"].iterdir()) == []


def test_symlink_inside_project_is_followed(env: dict[str, Path]) -> None:
    _write(env["aidd_home"] / "x", "payload")
    (env["project"] / "real").mkdir()
    (env["project"] / "alias").symlink_to("real")
    result = _sync(env, files="x -> alias/x")
    assert result.files == 1
    assert (env["project"] / "real" / "x").read_text() == "payload"


def test_more_than_one_arrow_and_directory_cases(env: dict[str, Path]) -> None:
    _write(env["aidd_home"] / "x", "payload")
    (env["aidd_home"] / "adir").mkdir()
    (env["project"] / "existing").mkdir()
    result = _sync(env, files="x -> a -> b\nadir\nx -> existing")
    warnings = _warnings(result)
    assert "copyfiles.txt:1: more than one '->'" in warnings[0]
    assert "copyfiles.txt:2: source" in warnings[1]
    assert "is a directory" in warnings[1]
    assert "copyfiles.txt:3: target existing is a directory" in warnings[2]
    assert result.files == 0


def test_arrow_without_spaces_is_part_of_the_name(env: dict[str, Path]) -> None:
    _write(env["aidd_home"] / "a->b", "odd")
    result = _sync(env, files="a->b")
    assert (env["project"] / "a->b").read_text() == "odd"
    assert result.warnings == 0


def test_copyfiles_source_equal_to_target_is_refused(env: dict[str, Path]) -> None:
    inside = _write(env["project"] / "same.txt", "keep")
    result = _sync(env, files=f"{inside} -> same.txt")
    assert "overlap" in _warnings(result)[0]
    assert inside.read_text() == "keep"


# -- copydirs (AC-86) --------------------------------------------------------------------------


def _source_tree(root: Path) -> Path:
    src = root / "skills"
    _write(src / "a.md", "a")
    _write(src / "sub" / "b.md", "b")
    _write(src / "node_modules" / "pkg" / "index.js", "src-nm")
    _write(src / "package-lock.json", "src-lock")
    _write(src / ".git" / "HEAD", "src-git")
    return src


def test_copydirs_mirrors_into_basename(env: dict[str, Path]) -> None:
    _source_tree(env["aidd_home"])
    result = _sync(env, dirs="skills")
    target = env["project"] / "skills"
    assert _tree(target) == {"a.md", "sub/b.md"}
    assert (result.dirs, result.warnings) == (1, 0)
    assert any("copydirs: " in m.text and "2 copied" in m.text for m in result.messages)


def test_copydirs_deletes_extra_files_and_keeps_excluded(env: dict[str, Path]) -> None:
    src = _source_tree(env["aidd_home"])
    target = env["project"] / "skills"
    _write(target / "stale.md", "old")
    _write(target / "gone" / "deep.md", "old")
    _write(target / "gone" / "node_modules" / "keep.js", "keep")
    for name in EXCLUDED - {".git", "node_modules"}:
        _write(target / "sub" / name, "keep")
    _write(target / "node_modules" / "x.js", "keep")
    _write(target / ".git" / "HEAD", "target-git")
    _sync(env, dirs="skills")
    assert not (target / "stale.md").exists()
    assert not (target / "gone" / "deep.md").exists()
    assert (target / "gone" / "node_modules" / "keep.js").read_text() == "keep"
    assert (target / "node_modules" / "x.js").read_text() == "keep"
    assert (target / ".git" / "HEAD").read_text() == "target-git"
    assert not (target / "node_modules" / "pkg").exists()
    for name in EXCLUDED - {".git", "node_modules"}:
        assert (target / "sub" / name).read_text() == "keep"
    assert not (target / "package-lock.json").exists()
    (src / "a.md").unlink()
    _sync(env, dirs="skills")
    assert not (target / "a.md").exists()


def test_copydirs_unchanged_files_are_not_rewritten(env: dict[str, Path]) -> None:
    src = _source_tree(env["aidd_home"])
    os.utime(src / "a.md", ns=(1_000_000_000, 1_000_000_000))
    _sync(env, dirs="skills")
    copied = env["project"] / "skills" / "a.md"
    assert copied.stat().st_mtime_ns == 1_000_000_000
    inode = copied.stat().st_ino
    result = _sync(env, dirs="skills")
    assert copied.stat().st_ino == inode
    assert any("0 copied, 0 deleted" in m.text for m in result.messages)
    (src / "a.md").write_text("changed!")
    _sync(env, dirs="skills")
    assert copied.read_text() == "changed!"


def test_copydirs_symlinks_in_source_are_not_followed(env: dict[str, Path]) -> None:
    src = _source_tree(env["aidd_home"])
    _write(env["outside"] / "secret.txt", "secret")
    (src / "out_dir").symlink_to(env["outside"])
    (src / "out_file").symlink_to(env["outside"] / "secret.txt")
    _sync(env, dirs="skills")
    target = env["project"] / "skills"
    assert not os.path.lexists(target / "out_dir")
    assert not os.path.lexists(target / "out_file")


def test_copydirs_symlink_in_target_is_replaced_not_followed(env: dict[str, Path]) -> None:
    _source_tree(env["aidd_home"])
    target = env["project"] / "skills"
    target.mkdir()
    (target / "sub").symlink_to(env["outside"])
    (target / "a.md").symlink_to(env["outside"] / "a.md")
    _sync(env, dirs="skills")
    assert list(env["outside"].iterdir()) == []
    assert not (target / "sub").is_symlink()
    assert (target / "sub" / "b.md").read_text() == "b"
    assert (target / "a.md").read_text() == "a"


@pytest.mark.parametrize(
    "target", [".", "./", ".git", ".automaker", ".automaker/iterations", ".AUTOMAKER", "../out"]
)
def test_copydirs_refuses_protected_targets(env: dict[str, Path], target: str) -> None:
    _source_tree(env["aidd_home"])
    for name in (".git", ".automaker/iterations"):
        _write(env["project"] / name / "keep", "keep")
    before = _tree(env["project"])
    result = _sync(env, dirs=f"skills -> {target}")
    [warning] = _warnings(result)
    assert warning.startswith(f"{env['aidd_home'] / 'copydirs.txt'}:1: ")
    assert _tree(env["project"]) == before
    assert result.dirs == 0


def test_copydirs_source_containing_the_project_is_refused(env: dict[str, Path]) -> None:
    result = _sync(env, dirs=f"{env['project'].parent} -> mirror")
    assert "overlap" in _warnings(result)[0]
    assert not (env["project"] / "mirror").exists()


def test_copydirs_missing_or_file_source_warns(env: dict[str, Path]) -> None:
    _write(env["aidd_home"] / "file.txt")
    result = _sync(env, dirs="nope\nfile.txt")
    warnings = _warnings(result)
    assert "copydirs.txt:1: source" in warnings[0]
    assert "does not exist" in warnings[0]
    assert "copydirs.txt:2: source" in warnings[1]
    assert "is not a directory" in warnings[1]


def test_copydirs_into_automaker_subdir_is_allowed(env: dict[str, Path]) -> None:
    _source_tree(env["aidd_home"])
    result = _sync(env, dirs="skills -> .automaker/prompts")
    assert result.dirs == 1
    assert (env["project"] / ".automaker" / "prompts" / "a.md").exists()


def test_dirs_run_before_files(env: dict[str, Path]) -> None:
    _source_tree(env["aidd_home"])
    _write(env["aidd_home"] / "extra.md", "extra")
    result = _sync(env, dirs="skills", files="extra.md -> skills/extra.md")
    assert (env["project"] / "skills" / "extra.md").read_text() == "extra"
    assert (result.dirs, result.files) == (1, 1)


def test_comment_only_list_in_aidd_home_does_not_hide_dot_config(env: dict[str, Path]) -> None:
    _write(env["aidd_home"] / "copydirs.txt", "# nothing yet\n")
    config = env["home"] / ".config" / "aidd"
    _write(config / "shared" / "rule.md", "rule")
    _write(config / "copydirs.txt", "shared")
    result = sync_project(env["project"], ListSources(env["home"], env["aidd_home"], None, None))
    assert (env["project"] / "shared" / "rule.md").read_text() == "rule"
    assert result.dirs == 1


def test_symlink_loop_and_unknown_user_are_warnings(env: dict[str, Path]) -> None:
    _write(env["aidd_home"] / "x", "payload")
    (env["project"] / "loop").symlink_to("loop")
    result = _sync(env, files="x -> loop/x\n~no-such-user-aidd/x")
    warnings = _warnings(result)
    assert len(warnings) == 2
    assert warnings[0].startswith(f"{env['aidd_home'] / 'copyfiles.txt'}:1: ")
    assert "copyfiles.txt:2: source" in warnings[1]
    assert result.files == 0
