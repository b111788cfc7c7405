"""opencode.json permissions (LAY-40, LAY-41, AC-28): one test per table row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aidd.agents.opencode_config import SCHEMA, ensure_opencode_permissions


def _config(root: Path) -> Path:
    return root / "opencode.json"


def test_absent_config_is_created(tmp_path: Path) -> None:
    assert ensure_opencode_permissions(tmp_path) == []
    text = _config(tmp_path).read_text()
    assert json.loads(text) == {"$schema": SCHEMA, "permission": {"*": "allow"}}
    assert text.startswith('{\n  "$schema"')
    assert _config(tmp_path).stat().st_mode & 0o777 == 0o644
    assert not list(tmp_path.glob(".aidd-tmp-*"))


def test_permission_is_added_keeping_other_keys_in_order(tmp_path: Path) -> None:
    _config(tmp_path).write_text('{"model": "x/y", "$schema": "s", "theme": {"a": 1}}')
    assert ensure_opencode_permissions(tmp_path) == []
    data = json.loads(_config(tmp_path).read_text())
    assert list(data) == ["model", "$schema", "theme", "permission"]
    assert data["permission"] == {"*": "allow"}
    assert data["theme"] == {"a": 1}


def test_star_is_inserted_first_and_user_rules_kept(tmp_path: Path) -> None:
    _config(tmp_path).write_text(
        '{"permission": {"bash": {"rm *": "deny"}, "edit": "ask"}, "model": "m"}'
    )
    assert ensure_opencode_permissions(tmp_path) == []
    text = _config(tmp_path).read_text()
    data = json.loads(text)
    assert list(data["permission"].items()) == [
        ("*", "allow"),
        ("bash", {"rm *": "deny"}),
        ("edit", "ask"),
    ]
    assert list(data) == ["permission", "model"]
    assert '\n  "permission": {\n    "*": "allow",' in text


@pytest.mark.parametrize(
    ("content", "warns"),
    [
        ('{"permission": "allow"}', False),
        ('{ "permission" : "ask" }', True),
        ('{"permission": {"*": "allow", "bash": "ask"}}', False),
        ('{"permission": {"bash": "ask", "*": "deny"}}', True),
        ('{"permission": ["odd"]}', True),
    ],
)
def test_existing_star_or_string_is_left_byte_identical(
    tmp_path: Path, content: str, warns: bool
) -> None:
    _config(tmp_path).write_text(content)
    warnings = ensure_opencode_permissions(tmp_path)
    assert _config(tmp_path).read_text() == content
    assert bool(warnings) == warns
    if warns:
        assert "may block on approvals" in warnings[0]


@pytest.mark.parametrize("content", ['{"permission": ', "[1, 2]", "\xff"])
def test_unparsable_config_is_left_untouched_with_a_warning(tmp_path: Path, content: str) -> None:
    _config(tmp_path).write_bytes(content.encode("latin-1"))
    before = _config(tmp_path).read_bytes()
    [warning] = ensure_opencode_permissions(tmp_path)
    assert "opencode.json" in warning
    assert _config(tmp_path).read_bytes() == before


def test_only_jsonc_is_left_alone_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "opencode.jsonc").write_text("// comment\n{}")
    [warning] = ensure_opencode_permissions(tmp_path)
    assert "opencode.jsonc" in warning
    assert not _config(tmp_path).exists()


def test_rewrite_only_when_changed(tmp_path: Path) -> None:
    ensure_opencode_permissions(tmp_path)
    first = _config(tmp_path).stat()
    assert ensure_opencode_permissions(tmp_path) == []
    assert _config(tmp_path).stat().st_ino == first.st_ino


def test_mode_bits_are_kept_on_rewrite(tmp_path: Path) -> None:
    _config(tmp_path).write_text("{}")
    _config(tmp_path).chmod(0o600)
    ensure_opencode_permissions(tmp_path)
    assert _config(tmp_path).stat().st_mode & 0o777 == 0o600


def test_symlinked_config_is_not_replaced(tmp_path: Path) -> None:
    shared = tmp_path / "shared.json"
    shared.write_text("{}")
    project = tmp_path / "project"
    project.mkdir()
    _config(project).symlink_to(shared)
    [warning] = ensure_opencode_permissions(project)
    assert "symlink" in warning
    assert _config(project).is_symlink()
    assert shared.read_text() == "{}"
