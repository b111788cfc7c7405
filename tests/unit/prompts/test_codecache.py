"""Compiled templates kept between runs (issue 33, prompts/codecache): a later start compiles
nothing it compiled before, yet a changed template (an override edited) is compiled again,
a project only ever gets code compiled from its own text, and a cache folder that cannot be
used leaves the start as it was."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from jinja2 import nodes

from aidd.errors import TemplateError
from aidd.project.paths import ProjectPaths
from aidd.prompts.codecache import CodeCache
from aidd.prompts.render import PromptRenderer
from aidd.prompts.select import PromptKind
from tests.unit.prompts.conftest import make_context


def _cache(tmp_path: Path) -> CodeCache:
    cache = CodeCache.for_user({"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert cache is not None
    return cache


def _parsed(renderer: PromptRenderer, monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The names the renderer parses (a parse precedes every compile)."""
    parsed: list[str | None] = []
    real = renderer.env._parse

    def spy(source: str, name: str | None, filename: str | None) -> nodes.Template:
        parsed.append(name)
        return real(source, name, filename)

    monkeypatch.setattr(renderer.env, "_parse", spy)
    return parsed


def _override(project: ProjectPaths, name: str, text: str) -> None:
    path = project.prompt_overrides / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_second_start_compiles_nothing_and_renders_the_same(
        project: ProjectPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = _cache(tmp_path)
    ctx = make_context(project, PromptKind.CODING)
    first = PromptRenderer.for_project(project, cache=cache)
    compiled = first.compile_all("opencode", sample=ctx)
    later = PromptRenderer.for_project(project, cache=cache)
    parsed = _parsed(later, monkeypatch)
    assert later.compile_all("opencode", sample=ctx) == compiled
    assert parsed == []
    assert later.render_prompt(ctx) == first.render_prompt(ctx) == \
        PromptRenderer.for_project(project).render_prompt(ctx)
    assert stat.S_IMODE(cache.directory.stat().st_mode) == 0o700
    assert project.root not in cache.directory.parents  # never in the project


def test_a_changed_override_is_compiled_again_from_its_own_text(
        project: ProjectPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = _cache(tmp_path)
    ctx = make_context(project, PromptKind.CODING)
    _override(project, "coding.md", "FIRST {{ project.name }}\n")
    assert PromptRenderer.for_project(project, cache=cache).render_prompt(ctx).startswith(
        "FIRST ")
    _override(project, "coding.md", "SECOND {{ project.name }}\n")
    renderer = PromptRenderer.for_project(project, cache=cache)
    parsed = _parsed(renderer, monkeypatch)
    assert renderer.render_prompt(ctx).startswith("SECOND ")
    assert parsed == ["coding.md"]


def test_another_projects_entry_or_a_planted_one_is_never_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries are named by template and path, and checked against the whole source: code
    compiled from one text never runs for another, whatever is in the folder."""
    cache = _cache(tmp_path)
    one, two = ProjectPaths(tmp_path / "one"), ProjectPaths(tmp_path / "two")
    _override(one, "coding.md", "ONE\n")
    _override(two, "coding.md", "TWO\n")
    ctx = make_context(one, PromptKind.CODING)
    PromptRenderer.for_project(one, cache=cache).render_prompt(ctx)
    planted = cache._path("coding.md", str(one.prompt_overrides / "coding.md")).read_bytes()
    PromptRenderer.for_project(two, cache=cache).render_prompt(ctx)
    for entry in cache.directory.iterdir():  # the first project's entry in every place
        entry.write_bytes(planted)
    renderer = PromptRenderer.for_project(two, cache=cache)
    parsed = _parsed(renderer, monkeypatch)
    assert renderer.render_prompt(ctx) == "TWO\n"
    assert parsed == ["coding.md"]


def test_includes_are_still_checked_from_a_kept_entry(project: ProjectPaths,
                                                      tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    _override(project, "todo.md", 'x\n{% include "_common/extra.md" %}\n')
    _override(project, "_common/extra.md", "extra\n")
    PromptRenderer.for_project(project, cache=cache).compile_all("opencode")
    (project.prompt_overrides / "_common/extra.md").unlink()
    with pytest.raises(TemplateError, match=r"not found: _common/extra\.md, "
                                            r"\.automaker/prompts/todo\.md:2"):
        PromptRenderer.for_project(project, cache=cache).compile_all("opencode")


def test_a_damaged_entry_is_compiled_again(project: ProjectPaths, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    cache = _cache(tmp_path)
    ctx = make_context(project, PromptKind.CODING)
    expected = PromptRenderer.for_project(project, cache=cache).render_prompt(ctx)
    for entry in cache.directory.iterdir():
        entry.write_bytes(entry.read_bytes()[:40])  # torn after its check
    renderer = PromptRenderer.for_project(project, cache=cache)
    parsed = _parsed(renderer, monkeypatch)
    assert renderer.render_prompt(ctx) == expected
    assert "coding.md" in parsed
    again = PromptRenderer.for_project(project, cache=cache)
    parsed = _parsed(again, monkeypatch)
    assert again.render_prompt(ctx) == expected
    assert parsed == []  # the entry written anew


@pytest.mark.parametrize("where", ["a_file", "open_to_others", "relative", "no_home"])
def test_an_unusable_folder_means_no_cache(tmp_path: Path, where: str) -> None:
    (tmp_path / "file").write_text("x")
    shared = tmp_path / "shared"
    (shared / "aidd" / "templates").mkdir(parents=True)
    os.chmod(shared / "aidd" / "templates", 0o777)
    environ = {"a_file": {"XDG_CACHE_HOME": str(tmp_path / "file")},
               "open_to_others": {"XDG_CACHE_HOME": str(shared)},
               "relative": {"XDG_CACHE_HOME": "cache", "HOME": "home"},
               "no_home": {}}[where]
    assert CodeCache.for_user(environ) is None


def test_an_unwritable_folder_compiles_as_before(project: ProjectPaths, tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    cache.directory.rmdir()  # gone after the start: every write fails
    (cache.directory.parent / "templates").write_text("not a folder")
    ctx = make_context(project, PromptKind.CODING)
    assert PromptRenderer.for_project(project, cache=cache).render_prompt(ctx) == \
        PromptRenderer.for_project(project).render_prompt(ctx)


def test_the_user_folder_is_xdg_cache_home_else_home(tmp_path: Path) -> None:
    by_xdg = CodeCache.for_user({"XDG_CACHE_HOME": str(tmp_path / "x"), "HOME": "/nowhere"})
    by_home = CodeCache.for_user({"HOME": str(tmp_path / "h")})
    assert by_xdg is not None
    assert by_home is not None
    assert by_xdg.directory == tmp_path / "x" / "aidd" / "templates"
    assert by_home.directory == tmp_path / "h" / ".cache" / "aidd" / "templates"
