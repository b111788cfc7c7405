"""What a checkpoint's `git add` is told about ignore rules (issue 33): aidd's runtime files
left out by patterns git never refuses, and whether the answer of `check-ignore` may have
changed since it was asked (the key of every file its rules can come from)."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path


def exclusions(paths: Iterable[str], globs: Iterable[str] = ()) -> list[str]:
    """Pathspecs leaving out each of `paths` and what is under it, and each of `globs`. git
    refuses a pathspec whose literal start names an ignored path (`.automaker/` often is), even
    to exclude it; a pattern from the first letter on (the first name's last letter as a
    one-letter class: `.automake[r]/iterations`) never is, so nothing needs checking first."""
    patterns = [_pattern(path) for path in paths]
    return [*(f":(exclude,glob){p}{tail}" for p in patterns for tail in ("", "/**")),
            *(f":(exclude,glob){_pattern(glob)}" for glob in globs)]


def _pattern(path: str) -> str:
    head, slash, rest = path.partition("/")
    return path if head.endswith(("*", "?", "]")) else f"{head[:-1]}[{head[-1]}]{slash}{rest}"


def rules_key(root: Path, work_tree: Path, git_dir: Path,
              listing: Iterable[tuple[str, str, str]]) -> tuple[object, ...]:
    """Where the ignore rules for the project's `.automaker/` paths can be: each .gitignore
    from the work tree's top down to `.automaker/`, `info/exclude`, and the excludes files the
    config names (`listing`: git's config list, its includes resolved); their names and stats
    (inode, size, mtime, ctime)."""
    named = tuple(value for _, key, value in listing if key.lower() == "core.excludesfile")
    return (*named, *map(_stat_key, _rule_files(root, work_tree, git_dir, named)))


@functools.lru_cache(maxsize=16)
def _rule_files(root: Path, work_tree: Path, git_dir: Path,
                named: tuple[str, ...]) -> tuple[Path, ...]:
    """`rules_key`'s files: the same for a run (the project's place and its repository's are
    fixed), so resolved once, not at each checkpoint (issue 33)."""
    real, top = root.resolve(), work_tree.resolve()
    folders = [real / ".automaker", real, *(p for p in real.parents if p.is_relative_to(top))]
    return (*(f / ".gitignore" for f in folders), git_dir / "info" / "exclude",
            *(work_tree / Path(value).expanduser() for value in named))


def _stat_key(path: Path) -> tuple[int, ...] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
