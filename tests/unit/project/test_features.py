"""Loading every features/<dir>/feature.json, each on its own (FEA-10, FEA-21, AC-65, issue 18)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from aidd.project import featurescan
from aidd.project.features import FeatureFile, duplicate_ids, load_features, load_file, parse_bytes
from aidd.project.featurescan import stray_files
from aidd.project.featurestate import WorkState
from aidd.project.paths import ProjectPaths
from tests.featurefiles import feat as valid
from tests.featurefiles import write


def test_missing_features_dir_gives_nothing(tmp_path: Path) -> None:
    assert load_features(ProjectPaths(tmp_path)) == []


def test_finds_the_files_one_level_down_sorted(tmp_path: Path) -> None:
    """Like AutoMaker's loader: `features/<dir>/feature.json` only; deeper ones are strays."""
    paths = ProjectPaths(tmp_path)
    write(paths, "b", valid("feature-2-b"))
    write(paths, "a/nested/deeper", valid("feature-1-a"))
    write(paths, "c", valid("feature-3-c"))
    (paths.features / "c" / "notes.json").write_text("{}")
    (paths.features / "feature.json").mkdir()  # a directory with that name is no file
    files = load_features(paths)
    assert [f.dir_name for f in files] == ["b", "c"]
    assert all(f.is_valid for f in files)
    assert files[0].path == paths.features / "b/feature.json"
    assert stray_files(paths) == [str(paths.features / "a/nested/deeper/feature.json")]


def test_one_malformed_file_among_ten(tmp_path: Path) -> None:
    """AC-65: the malformed one is the only invalid file; later ids still resolve."""
    paths = ProjectPaths(tmp_path)
    for i in range(10):
        deps = [f"feature-{i + 1}-f"] if i < 9 else ["feature-0-f"]
        write(paths, f"f{i:02d} with spaces", valid(f"feature-{i}-f", dependencies=deps))
    write(paths, "f05 bad", '{"id": "feature-99-bad",\n  "category": }')
    files = load_features(paths)
    assert len(files) == 11
    invalid = [f for f in files if not f.is_valid]
    assert [f.dir_name for f in invalid] == ["f05 bad"]
    assert invalid[0].parse_error == "invalid JSON: Expecting value (line 2, column 15)"
    assert invalid[0].messages() == (invalid[0].parse_error,)


def test_parse_errors_never_crash(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    write(paths, "utf16", "x")
    (paths.features / "utf16" / "feature.json").write_bytes(b"\xff\xfe\x00\xd8")
    write(paths, "deep", "[" * 100_000 + "]" * 100_000)
    write(paths, "empty", "")
    write(paths, "latin", "x")
    (paths.features / "latin" / "feature.json").write_bytes(b'{"id": "caf\xe9"}')
    files = load_features(paths)
    assert len(files) == 4
    assert all(f.parse_error and f.parse_error.startswith("invalid JSON") for f in files)
    assert all(f.feature is None and f.data is None for f in files)


def test_large_file_is_read_whole(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    write(paths, "big", valid("feature-1-big", description="x" * 300_000))
    (file,) = load_features(paths)
    assert file.is_valid
    assert file.feature is not None
    assert len(file.feature.description) == 300_000


def test_unknown_keys_are_kept(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    data = valid("feature-1-a", affectedFiles=["x.py"], steps=["s"], passes=True)
    write(paths, "a", data)
    (file,) = load_features(paths)
    assert file.feature is not None
    assert file.data == data
    assert list(file.data) == list(data)


def _parsed(data: object) -> FeatureFile:
    return parse_bytes("/p/.automaker/features/x/feature.json", json.dumps(data).encode())


def test_the_typed_feature_and_its_state() -> None:
    f = _parsed(valid("x", status="in_progress", passes=True, priority=2)).feature
    assert f is not None
    assert (f.status, f.passes, f.priority, f.state) == ("in_progress", True, 2, WorkState.ACTIVE)
    assert not f.done  # issue 31: the status wins over an old `passes`
    assert _parsed(valid("x", passes=True)).feature.done  # type: ignore[union-attr]
    assert _parsed(valid("x", status="running")).feature.state is WorkState.OPEN  # type: ignore[union-attr]
    assert _parsed(valid("x", status="failed")).feature.state is WorkState.WAITING  # type: ignore[union-attr]
    assert _parsed(valid("x", status="")).feature.status is None  # type: ignore[union-attr]
    assert _parsed(valid("x", status="pipeline_qa")).feature.state is WorkState.ACTIVE  # type: ignore[union-attr]
    assert _parsed(valid("x", status="done")).feature.state is WorkState.OPEN  # type: ignore[union-attr]
    assert _parsed(valid("x", priority=True)).feature is None
    assert _parsed(valid("x", status=1)).feature is None
    assert _parsed(valid("")).feature is None
    assert _parsed({"id": "x", "category": "c"}).feature is None
    assert _parsed([]).feature is None
    untitled = {"id": "5f0c2a9e", "category": "", "description": ""}  # AutoMaker's create()
    assert _parsed(untitled).feature is not None


def test_a_broken_file_is_invalid_whatever_it_says(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    write(paths, "a", '{"status": "verified", "id": ')
    write(paths, "b", {"status": "verified"})
    a, b = load_features(paths)
    assert a.parse_error
    assert b.feature is None
    assert b.errors[0].startswith("id: missing")


def test_symlinks_outside_the_project_are_not_followed(tmp_path: Path) -> None:
    project, outside = tmp_path / "p", tmp_path / "outside"
    paths = ProjectPaths(project)
    write(paths, "inside", valid("feature-1-in"))
    (outside / "ext").mkdir(parents=True)
    (outside / "ext" / "feature.json").write_text(json.dumps(valid("feature-2-out")))
    (paths.features / "linkdir").symlink_to(outside / "ext")
    (paths.features / "lf").mkdir()
    (paths.features / "lf" / "feature.json").symlink_to(outside / "ext" / "feature.json")
    assert [f.dir_name for f in load_features(paths)] == ["inside"]


def test_symlinked_directories_are_not_walked(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    write(paths, "real", valid("feature-1-real"))
    shared = tmp_path / "shared" / "s1"
    shared.mkdir(parents=True)
    (shared / "feature.json").write_text(json.dumps(valid("feature-2-shared")))
    (paths.features / "alias").symlink_to(paths.features / "real")
    (paths.features / "ext").symlink_to(tmp_path / "shared")
    (paths.features / "real" / "loop").symlink_to(paths.features)
    assert [f.dir_name for f in load_features(paths)] == ["real"]


def test_symlinked_file_inside_the_project_is_read(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "f.json").write_text(json.dumps(valid("feature-1-linked")))
    (paths.features / "linked").mkdir(parents=True)
    (paths.features / "linked" / "feature.json").symlink_to(tmp_path / "docs" / "f.json")
    (paths.features / "dangling").mkdir()
    (paths.features / "dangling" / "feature.json").symlink_to(tmp_path / "nowhere.json")
    (paths.features / "todir").mkdir()
    (paths.features / "todir" / "feature.json").symlink_to(tmp_path / "docs")
    (file,) = load_features(paths)
    assert file.feature is not None
    assert file.feature.id == "feature-1-linked"


def test_odd_entries_are_skipped(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    write(paths, "ok", valid("feature-1-ok"))
    (paths.features / "empty leaf").mkdir()
    (paths.features / "fifo").mkdir()
    os.mkfifo(paths.features / "fifo" / "feature.json")  # must not block the reader
    (paths.features / "dir" / "feature.json").mkdir(parents=True)
    (paths.features / "notes.txt").write_text("x")
    assert [f.dir_name for f in load_features(paths)] == ["ok"]


def test_features_dir_linked_out_of_the_project(tmp_path: Path) -> None:
    project, outside = tmp_path / "p", tmp_path / "o"
    write(ProjectPaths(outside), "a", valid("feature-1-a"))
    (project / ".automaker").mkdir(parents=True)
    (project / ".automaker" / "features").symlink_to(outside / ".automaker" / "features")
    assert load_features(ProjectPaths(project)) == []


def test_a_plain_project_is_loaded_without_resolving_a_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: each load (three an iteration) resolved the project twice and features/ once
    (an lstat per component); with no link below the project none is needed. A features/
    linked elsewhere in the project is still resolved, and read."""
    paths = ProjectPaths(tmp_path.resolve())
    write(paths, "a", valid("feature-1-a"))
    resolved: list[object] = []
    realpath = os.path.realpath
    monkeypatch.setattr(os.path, "realpath",
                        lambda path, **kw: resolved.append(path) or realpath(path, **kw))
    assert [f.dir_name for f in load_features(paths)] == ["a"]
    assert resolved == []
    paths.features.rename(paths.root / "kept")
    paths.features.symlink_to(paths.root / "kept")
    assert [f.dir_name for f in load_features(paths)] == ["a"]
    assert resolved


def test_validate_flag_adds_the_warnings(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    write(paths, "feature-1-a", valid("feature-1-a", dependencies=["feature-9-x"]))
    write(paths, "b", valid("feature-2-b", category=5))
    bad, checked = load_features(paths)
    _, raw = load_features(paths, validate=False)
    assert checked.errors == raw.errors == ()
    assert checked.is_valid
    assert [w.split(" (")[0] for w in checked.warnings] == [
        'dependencies: unknown feature id "feature-9-x"']
    assert raw.warnings == ()
    assert bad.errors == ("category: must be a string (found number)",)
    assert bad.warnings == ()  # a file with errors gets no warnings


def test_findings_and_duplicates(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    write(paths, "audit-sec-1-a", valid("feature-1-a"))
    write(paths, "b", valid("feature-1-a"))
    write(paths, "c", valid("feature-2-c"))
    files = load_features(paths)
    assert [f.is_finding for f in files] == [True, False, False]
    dupes = duplicate_ids(files)
    assert list(dupes) == ["feature-1-a"]
    assert [f.dir_name for f in dupes["feature-1-a"]] == ["audit-sec-1-a", "b"]


def test_unreadable_file_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_file(str(tmp_path / "gone" / "feature.json"), str(tmp_path)) is None
    paths = ProjectPaths(tmp_path)
    write(paths, "locked", valid("feature-1-a"))

    def refuse(fd: int, path: str) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(featurescan, "_read_regular", refuse)
    (file,) = load_features(paths)
    assert file.parse_error == "cannot read: Permission denied"
    assert file.dir_name == "locked"


def test_nested_features_are_strays(tmp_path: Path) -> None:
    """AutoMaker never sees them, so aidd does not count them either (issue 18 item 8)."""
    paths = ProjectPaths(tmp_path)
    write(paths, "parent", valid("feature-1-parent"))
    write(paths, "parent/child", valid("feature-2-child"))
    write(paths, "group/sub/leaf", valid("feature-3-leaf"))
    (paths.features / "feature.json").write_text("{}")
    assert [f.dir_name for f in load_features(paths)] == ["parent"]
    assert [os.path.relpath(p, paths.features) for p in stray_files(paths)] == [
        "feature.json", "group/sub/leaf/feature.json", "parent/child/feature.json"]


def test_a_feature_with_automaker_s_inline_attachments_is_read(tmp_path: Path) -> None:
    """Issue 31 item 8: AutoMaker inlines each text attachment (up to 1 MiB, image-utils.ts:24)
    into feature.json; a 1.3 MB verified feature loads on its board and counts done here."""
    paths = ProjectPaths(tmp_path)
    attachment = {"id": "att-1", "path": "notes.txt", "filename": "notes.txt",
                  "mimeType": "text/plain", "content": "x" * (1 << 20)}
    data = valid("feature-1767687300000-big", status="verified",
                 textFilePaths=[attachment, attachment | {"id": "att-2", "content": "y" * 300_000}])
    write(paths, "feature-1767687300000-big", data)
    (file,) = load_features(paths)
    assert file.path.stat().st_size > 1_300_000
    assert file.is_valid, file.messages()
    assert file.feature is not None
    assert file.feature.done
