"""Which feature an attempt worked on (issue 32): --feature, else what it changed, else what
was in progress at its start."""

from __future__ import annotations

from pathlib import Path

from aidd.project.attemptfeature import feature_of, features_changed, started_features
from aidd.project.paths import ProjectPaths
from tests.featurefiles import feature


def test_the_named_feature_wins() -> None:
    assert feature_of("login", ("cart",), ("search",)) == "login"


def test_a_changed_feature_comes_before_the_one_in_progress() -> None:
    assert feature_of(None, ("cart",), ("search",)) == "cart"


def test_of_several_changed_the_one_in_progress_at_start_else_none() -> None:
    assert feature_of(None, ("cart", "login"), ("login",)) == "login"
    assert feature_of(None, ("cart", "login"), ("search",)) is None  # an initializer's sweep
    assert feature_of(None, ("cart", "login"), ("cart", "login")) is None


def test_nothing_changed_falls_back_to_the_one_in_progress_else_none() -> None:
    assert feature_of(None, (), ("login",)) == "login"
    assert feature_of(None, (), ("login", "search")) is None
    assert feature_of(None, (), ()) is None


def test_feature_folders_are_read_from_changed_paths_wherever_the_project_sits() -> None:
    changed = ["src/cart.py", ".automaker/features/cart/feature.json",
               "app/.automaker/features/login/images/a.png", ".automaker/features/cart/x.md",
               ".automaker/features/feature.json", ".automaker/features/../evil/x"]
    assert features_changed(changed) == ("cart", "login")


def test_started_features_are_the_ones_in_progress(tmp_path: Path) -> None:
    feature(tmp_path, "b-login", status="in_progress")
    feature(tmp_path, "a-cart", status="pipeline_review")
    feature(tmp_path, "c-search")
    feature(tmp_path, "d-done", status="verified", passes=True)
    assert started_features(ProjectPaths(tmp_path)) == ("a-cart", "b-login")


def test_an_initializer_that_writes_every_feature_is_on_none_of_them() -> None:
    written = [f".automaker/features/f{n}/feature.json" for n in range(40)]
    assert feature_of(None, features_changed(written), ()) is None
