"""The board's mark of a feature worked in a worktree (`--parallel N`, docs/parallel.md): set
in the project's file, given back as it was, never over someone else's edit."""

from __future__ import annotations

import json
from pathlib import Path

from aidd.project import boardmarks

REL = ".automaker/features/f1/feature.json"
BEFORE = b'{"id": "f1", "category": "c", "description": "d", "status": "backlog"}\n'


def _project(root: Path) -> Path:
    (root / REL).parent.mkdir(parents=True)
    (root / REL).write_bytes(BEFORE)
    return root


def test_the_mark_is_automakers_and_goes_back_byte_for_byte(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    found = boardmarks.mark(root, REL, "aidd/f1")
    assert found is not None
    data = json.loads((root / REL).read_text())
    assert (data["branchName"], data["status"], data["id"]) == ("aidd/f1", "in_progress", "f1")
    boardmarks.unmark(root, found)
    assert (root / REL).read_bytes() == BEFORE


def test_an_edit_made_since_the_mark_is_kept(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    found = boardmarks.mark(root, REL, "aidd/f1")
    assert found is not None
    (root / REL).write_text('{"id": "f1", "status": "waiting_approval"}\n')  # the user's
    boardmarks.unmark(root, found)
    assert json.loads((root / REL).read_text())["status"] == "waiting_approval"


def test_a_worktrees_copy_loses_the_mark(tmp_path: Path) -> None:
    root, tree = _project(tmp_path / "p"), tmp_path / "tree"
    found = boardmarks.mark(root, REL, "aidd/f1")
    assert found is not None
    (tree / REL).parent.mkdir(parents=True)
    (tree / REL).write_bytes((root / REL).read_bytes())  # the seed copied the marked file
    boardmarks.unmarked_copy(tree, found)
    assert (tree / REL).read_bytes() == BEFORE


def test_a_file_that_is_no_json_object_or_a_link_is_left_alone(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    (root / REL).write_text("[1, 2]\n")
    assert boardmarks.mark(root, REL, "aidd/f1") is None
    assert (root / REL).read_text() == "[1, 2]\n"
    outside = tmp_path / "outside.json"
    outside.write_bytes(BEFORE)
    (root / REL).unlink()
    (root / REL).symlink_to(outside)
    assert boardmarks.mark(root, REL, "aidd/f1") is None
    assert outside.read_bytes() == BEFORE


def test_a_killed_runs_mark_is_taken_off_at_the_start(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    assert boardmarks.mark(root, REL, "aidd/f1") is not None  # then aidd was killed
    data = json.loads((root / REL).read_text())
    assert boardmarks.clear_left(root, REL, data, lambda: BEFORE, "aidd/")
    assert (root / REL).read_bytes() == BEFORE  # the commit's
    assert boardmarks.mark(root, REL, "aidd/f1") is not None
    data = json.loads((root / REL).read_text())
    assert boardmarks.clear_left(root, REL, data, lambda: None, "aidd/")  # nothing committed
    assert "branchName" not in json.loads((root / REL).read_text())
    automaker = {"id": "f1", "branchName": "feature/f1", "status": "in_progress"}
    assert not boardmarks.clear_left(root, REL, automaker, lambda: BEFORE, "aidd/")


AGENT_KEYS = frozenset({"status", "passes", "updatedAt", "gateNote"})
AGENT = (b'{"id": "f1", "category": "c", "description": "d, done", "status": "verified", '
         b'"passes": true}\n')


def test_the_carried_file_keeps_a_board_edit_made_while_the_slot_worked(
        tmp_path: Path) -> None:
    """A person raised the priority and reworded the category on the board while the agent
    finished the feature in its worktree: after the merge the board has the agent's verdict
    and description, the person's priority and category, and no mark."""
    root = _project(tmp_path / "p")
    found = boardmarks.mark(root, REL, "aidd/f1")
    assert found is not None
    edited = json.loads((root / REL).read_text()) | {"priority": 1, "category": "urgent",
                                                      "status": "waiting_approval"}
    board = json.dumps(edited).encode()
    data = json.loads(boardmarks.carried(AGENT, found, board, AGENT_KEYS))
    assert data == {"id": "f1", "category": "urgent", "description": "d, done",
                    "status": "verified", "passes": True, "priority": 1}


def test_without_a_board_edit_the_agents_file_is_carried_byte_for_byte(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    found = boardmarks.mark(root, REL, "aidd/f1")
    assert found is not None
    assert boardmarks.carried(AGENT, found, found.marked, AGENT_KEYS) == AGENT
    assert boardmarks.carried(AGENT, found, AGENT, AGENT_KEYS) == AGENT  # merged (tracked)
    assert boardmarks.carried(AGENT, None, b"{}", AGENT_KEYS) == AGENT
    assert boardmarks.carried(AGENT, found, b"not json", AGENT_KEYS) == AGENT
