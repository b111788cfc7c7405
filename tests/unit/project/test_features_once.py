"""The one-pass load and the paused collector of `--check-features` and `--status` (issue 33):
the same records and messages as judging each file alone, and no collection pass while the
report runs but the one after it."""

from __future__ import annotations

import gc
import itertools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aidd.project import featurerules, featurestate
from aidd.project.featurerules import feature_errors, feature_warnings
from aidd.project.features import load_features, parse_bytes
from aidd.project.paths import ProjectPaths
from aidd.reports.featurecheck import check_features
from aidd.reports.status import build_status
from tests.featurefiles import feat, write

STATUSES: list[Any] = [None, "", "backlog", "running", "in_progress", "pipeline_x", "pipeline_",
                       "verified", "completed", "waiting_approval", "failed", "bogus", 3, []]
PASSES: list[Any] = [None, True, False, "true", 1, 0, []]


def _hostile(paths: ProjectPaths) -> None:
    """Every status beside every `passes`, plus files that do not parse or break rules."""
    for n, (status, passes) in enumerate(itertools.product(STATUSES, PASSES)):
        data = feat(f"f{n}", status=status, passes=passes, dependencies=[f"f{n + 1}", "ghost"])
        write(paths, f"f{n}", data)
    write(paths, "no-id", {"category": "c", "description": "d"})
    write(paths, "other", feat("elsewhere", priority=0))
    (paths.features / "broken").mkdir()
    (paths.features / "broken" / "feature.json").write_bytes(b"{not json")
    (paths.features / "list").mkdir()
    (paths.features / "list" / "feature.json").write_text("[1]")


def _old_passes_rules(data: dict[str, Any]) -> list[str]:
    """The two `passes: true` rules as asked before their short cut: for every file."""
    return ([" says not started"] if featurestate.inconsistent(data) else []) + (
        [" says in progress"] if featurestate.ambiguous_pass(data) else [])


def test_one_pass_gives_what_judging_each_file_alone_gives(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    _hostile(paths)
    files = load_features(paths)
    known = {f.feature_id for f in files if f.feature_id is not None}
    for file in files:
        alone = parse_bytes(file.location, Path(file.location).read_bytes())
        assert (alone.data, alone.parse_error, alone.errors, alone.feature) == (
            file.data, file.parse_error, file.errors, file.feature)
        expected = () if alone.feature is None else tuple(
            feature_warnings(file.data, file.dir_name, known))
        assert file.warnings == expected
        if isinstance(file.data, dict) and not feature_errors(file.data, file.dir_name):
            passes = [w for w in file.warnings if w.startswith("passes: true")]
            old = _old_passes_rules(file.data)
            assert len(passes) == len(old)
            assert all(o in w for w, o in zip(passes, old, strict=True))
    assert [f.dir_name for f in load_features(paths, validate=False)] == [
        f.dir_name for f in files]
    assert all(f.warnings == () for f in load_features(paths, validate=False))


@contextmanager
def _collections() -> Iterator[list[int]]:
    seen: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.collect()  # the counts start at 0: only what the block allocates can start a pass
    gc.callbacks.append(record)
    try:
        yield seen
    finally:
        gc.callbacks.remove(record)


def test_check_and_status_collect_once_at_most_after_resuming(tmp_path: Path) -> None:
    """After the load every collection would walk all the parsed files again to find nothing
    (measured ~10 % of `--check-features` at 5,000 features)."""
    paths = ProjectPaths(tmp_path)
    for n in range(1000):
        write(paths, f"feature-{n}", feat(f"feature-{n}", dependencies=["ghost"]))
    assert gc.isenabled()
    with _collections() as seen:
        text, _ = check_features(paths)
    with _collections() as seen_by_status:
        build_status(paths, None, datetime.now(UTC), require_features=True)
    # One young-generation pass is left: the first allocation after the collector resumes.
    assert len(seen) <= 1
    assert len(seen_by_status) <= 1
    assert gc.isenabled()
    assert text.count('unknown feature id "ghost"') == 1000


class _Text(str):
    """A str that is not exactly one (json.loads never makes it; a caller's mapping might)."""


HOSTILE: list[Any] = [None, True, False, 0, -1, 1.5, float("inf"), "", "s", _Text("t"), [],
                      [1], {}, {"a": None}]


def _old_typed(data: dict[str, Any]) -> list[str]:
    """The type rule as it was evaluated before its fast path: a pass over every key."""
    wrong = [key for key in data if key in featurerules._KINDS
             and data[key] is not None
             and featurerules.json_type(data[key]) != featurerules._KINDS[key][0]]
    wrong.sort(key=list(featurerules._KINDS).index)
    return [f"{key}: must be {featurerules._KINDS[key][1]} "
            f"(found {featurerules.json_type(data[key])})" for key in wrong]


def test_the_type_rule_gives_the_same_messages_in_the_same_order() -> None:
    keys = list(featurerules._KINDS)
    cases = [feat() | {key: value} for key in keys for value in HOSTILE]
    # Two misfits, written in the reverse of the rule's order, beside fitting keys.
    cases += [feat(status="x", passes=True) | {b: value, a: value}
              for a, b in itertools.pairwise(keys) for value in HOSTILE]
    for data in cases:
        assert featurerules._typed(data) == _old_typed(data), data
        assert set(_old_typed(data)) <= set(feature_errors(data, "d"))


def test_values_in_messages_are_shown_as_json_dumps_shows_them() -> None:
    texts = ["", "a", "é中", 'q"uote', "back\\slash", "tab\t", "nl\n", "\x7f", "\u2028", "\x00",
             "x" * 59, "y" * 60, "z" * 61, _Text("sub")]
    numbers: list[Any] = [0, -7, 4, 10**70, True, False, None, 1.5, float("nan"), [1, "a"], {}]
    for value in texts + numbers:
        text = json.dumps(value, ensure_ascii=False)
        assert featurerules._shown(value) == (text if len(text) <= 60 else text[:57] + "...")
