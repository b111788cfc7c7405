"""CMP-20/21 TODO syntax and the FEA-33 file lookup."""

from __future__ import annotations

from pathlib import Path

import pytest

from aidd.project.paths import ProjectPaths
from aidd.project.todo import (
    ROOT_TODO_NAMES,
    TodoClass,
    classify_line,
    find_todo_file,
    item_text,
    read_todo,
    summarize,
)

A, D, F, M, N = (
    TodoClass.ACTIONABLE,
    TodoClass.DONE,
    TodoClass.DEFERRED,
    TodoClass.MARKER,
    TodoClass.OTHER,
)


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # every example of the CMP-20 table
        ("- [ ] add retry", A),
        ("-[] x", A),
        ("  - [  ] x", A),
        ("- [x] ship v1", D),
        ("- [X] ship v1", D),
        ("- [~] rotate the production key (needs the owner)", F),
        ("- [!] vendor API has no sandbox", F),
        ("# TODO: wire the mailer", M),
        ("// TODO: wire the mailer", M),
        ("* [ ] x", N),
        ("1. [ ] x", N),
        ("# TODO List", N),
        # around the patterns
        ("\t- [ ] tab indent", A),
        ("-   [ ]   spaced", A),
        ("- [\t] tab in box", A),
        ("    - [x] nested done", D),
        ("- [ x] space before x", N),
        ("- [xx] two x", N),
        ("- [~ ] space after tilde", N),
        ("   # TODO: indented marker", M),
        ("#TODO: no space", M),
        ("//   TODO: spaced", M),
        ("## TODO: two hashes", N),
        ("# todo: lower case", N),
        ("text # TODO: not at start", N),
        ("", N),
        ("- plain bullet", N),
        ("[ ] no dash", N),
    ],
)
def test_classify_line(line: str, kind: TodoClass) -> None:
    assert classify_line(line) is kind


def test_item_text_is_text_after_the_checkbox() -> None:
    assert item_text("  - [ ]   add retry  ") == "add retry"
    assert item_text("- [x] ship v1") == "ship v1"
    assert item_text("# TODO: wire") == "# TODO: wire"


def test_summarize_counts_and_blocking() -> None:
    text = "\n".join(
        [
            "# TODO List",
            "- [ ] one",
            "  - [ ] two (indented counts, CMP-21)",
            "- [x] done",
            "- [~] needs owner",
            "- [!] blocked",
            "```",
            "- [ ] inside a fence still counts",
            "```",
            "# TODO: marker",
        ]
    )
    s = summarize(text)
    assert s.actionable == ("one", "two (indented counts, CMP-21)", "inside a fence still counts")
    assert s.done == ("done",)
    assert s.deferred == ("needs owner", "blocked")
    assert s.markers == ("# TODO: marker",)
    assert s.total == 6
    assert s.complete_pct == 16
    assert s.blocks
    assert s.blocking_lines == s.actionable


def test_markers_block_only_when_no_checkbox_blocks() -> None:
    s = summarize("- [x] a\n// TODO: wire the mailer\n")
    assert s.blocks
    assert s.blocking_lines == ("// TODO: wire the mailer",)
    assert not summarize("- [x] a\n- [~] b\n- [!] c\n").blocks


def test_crlf_and_empty() -> None:
    s = summarize("- [ ] a\r\n- [x] b\r\n")
    assert s.actionable == ("a",)
    assert s.done == ("b",)
    empty = summarize("")
    assert (empty.total, empty.complete_pct, empty.blocks) == (0, 0, False)


def test_read_todo(tmp_path: Path) -> None:
    assert read_todo(tmp_path, tmp_path / "missing.md") is None
    assert read_todo(tmp_path, tmp_path) is None
    f = tmp_path / "todo.md"
    f.write_bytes(b"- [ ] caf\xe9 latin-1\n- [x] ok\n")
    s = read_todo(tmp_path, f)
    assert s is not None
    assert len(s.actionable) == 1
    assert s.done == ("ok",)


def test_find_todo_file_order(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    assert find_todo_file(paths) is None
    for name in reversed(ROOT_TODO_NAMES):
        (tmp_path / name).write_text("- [ ] x\n")
        found = find_todo_file(paths)
        assert found is not None
        assert found.name == name
    paths.automaker.mkdir()
    paths.todo.write_text("")
    assert find_todo_file(paths) == paths.todo


def test_find_todo_file_skips_directories(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    (tmp_path / "todo.md").mkdir()
    (tmp_path / "tasks.md").write_text("- [ ] x\n")
    assert find_todo_file(paths) == tmp_path / "tasks.md"
