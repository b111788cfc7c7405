"""Circular fixes (issue 32): a feature whose attempts end the same way
--max-attempts-per-feature times is set aside (`failed`, why in `error`), the prompts say not
to take it, the loop moves on, and a run left with only set-aside features ends saying so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aidd.errors import ExitCode
from aidd.gate.commands import parse_gate
from aidd.project import features
from aidd.project.paths import ProjectPaths
from aidd.session.outcome import Reason
from tests.fakes.gate import FakeGate, red
from tests.fakes.session import failure, success
from tests.featurefiles import feature
from tests.unit.run.conftest import Loop, ScheduledClock

PYTEST = parse_gate([{"name": "pytest", "run": "pytest -q --junitxml=report.xml",
                      "junit": "report.xml"}])


def _data(root: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (ProjectPaths(root).features / name / "feature.json").read_text())
    return data


def _start(name: str, code: str = "x = 1\n") -> Any:
    """The agent takes `name`: sets it in progress and writes its (broken) fix."""
    def edit(project: Path) -> None:
        path = ProjectPaths(project).features / name / "feature.json"
        data = json.loads(path.read_text())
        data["status"] = "in_progress"
        path.write_text(json.dumps(data))
        (project / f"{name}.py").write_text(code)
    return edit


def _finish(name: str) -> Any:
    def edit(project: Path) -> None:
        path = ProjectPaths(project).features / name / "feature.json"
        data = json.loads(path.read_text())
        data.update(status="verified", passes=True)
        path.write_text(json.dumps(data))
    return edit


def _project(loop: Loop) -> None:
    feature(loop.paths.root, "a-cart")
    feature(loop.paths.root, "b-login")


def test_the_same_failure_three_times_sets_the_feature_aside_and_the_run_moves_on(
        loop: Loop) -> None:
    _project(loop)
    broken = failure(3, Reason.EXIT_STATUS, edit=_start("a-cart"))
    run = loop.run(broken, broken, broken, success(_finish("b-login")), max_iterations=8)
    assert run.code == ExitCode.SUCCESS, run.console
    (aside,) = run.named("feature_set_aside")
    assert (aside["number"], aside["feature"], aside["attempts"], aside["limit"]) == \
        (3, "a-cart", [1, 2, 3], 3)
    assert all("exited with status 3" in words for words in aside["endings"])
    data = _data(loop.paths.root, "a-cart")
    assert data["status"] == "failed"
    assert data["error"].startswith("set aside by aidd: 3 attempts (001, 002, 003) ended the "
                                    "same way: the CLI exited with status 3")
    assert [e["feature"] for e in run.named("iteration_end")] == ["a-cart"] * 3 + ["b-login"]
    fourth = run.session.requests[3].prompt
    assert "## Features set aside for the night" in fourth
    assert "- a-cart: set aside by aidd: 3 attempts" in fourth
    end = run.run_end
    assert end["reason"] == "set_aside"
    assert end["exit_code"] == 0
    assert end["health"]["verdict"] == "failed"
    assert "nothing workable was left but features set aside" in end["health"]["headline"]
    assert len(run.session.requests) == 4  # nothing left after b-login: no fifth attempt


def test_the_same_gate_failures_count_as_the_same_ending(loop: Loop) -> None:
    _project(loop)
    gate = FakeGate([{}, *({"pytest": red("t::cart_total")} for _ in range(3)), {}])
    run = loop.run(*(success(_start("a-cart", f"x = {n}\n")) for n in range(3)),
                   success(_finish("b-login")), fake_gate=gate, gate=PYTEST,
                   max_attempts_per_feature=3, max_iterations=4)
    (aside,) = run.named("feature_set_aside")
    assert aside["attempts"] == [1, 2, 3]
    assert "t::cart_total" in aside["endings"][0]
    assert _data(loop.paths.root, "a-cart")["status"] == "failed"


def test_different_endings_never_add_up_and_zero_turns_it_off(loop: Loop) -> None:
    _project(loop)
    turns = [failure(3, edit=_start("a-cart")),
             failure(75, Reason.NO_WORK, edit=_start("a-cart")), failure(3, edit=_start("a-cart"))]
    run = loop.run(*turns, max_iterations=3)
    assert run.named("feature_set_aside") == []
    off = loop.run(*([failure(3, edit=_start("a-cart"))] * 4), max_attempts_per_feature=0,
                   max_iterations=4)
    assert off.named("feature_set_aside") == []
    assert _data(loop.paths.root, "a-cart")["status"] == "in_progress"


def test_a_feature_a_person_moved_meanwhile_is_not_set_aside(loop: Loop) -> None:
    _project(loop)

    def review(project: Path) -> None:  # the third attempt ends with it waiting for review
        _start("a-cart")(project)
        path = ProjectPaths(project).features / "a-cart" / "feature.json"
        path.write_text(json.dumps({**json.loads(path.read_text()),
                                    "status": "waiting_approval"}))

    run = loop.run(failure(3, edit=_start("a-cart")), failure(3, edit=_start("a-cart")),
                   failure(3, edit=review), max_iterations=3)
    assert run.named("feature_set_aside") == []
    assert "error" not in _data(loop.paths.root, "a-cart")


def test_the_count_goes_on_after_a_run_that_was_killed(loop: Loop) -> None:
    """A kill -9 mid-night does not give a feature N fresh attempts: the endings of a run
    without a run_end count on (not those of a run that ended: it set aside what it had to)."""
    _project(loop)
    run_id, ts = "20261120T010000Z-4242", "2026-11-20T01:10:00.000Z"
    killed = [{"event": "run_start"},
              *({"event": "iteration_end", "number": n, "outcome": "failure",
                 "reason": "exit_status", "result": 3, "feature": "a-cart"} for n in (1, 2)),
              {"event": "iteration_start", "number": 3, "kind": "coding", "feature": "a-cart"}]
    loop.paths.events.write_text("".join(
        json.dumps({"v": 1, "ts": ts, "run": run_id, **e}) + "\n" for e in killed))
    broken = failure(3, edit=_start("a-cart"))
    run = loop.run(broken, success(_finish("b-login")), max_iterations=3)
    (aside,) = run.named("feature_set_aside")
    assert aside["attempts"][:2] == [1, 2]
    assert aside["number"] == aside["attempts"][2]
    assert aside["endings"][0] == "it ended with exit status (last run)"
    assert [e["feature"] for e in run.named("iteration_end") if e["run"] != run_id] == \
        ["a-cart", "b-login"]


def test_the_same_change_again_by_tree_is_the_same_ending(loop: Loop) -> None:
    """Successes that leave the project's tree as an earlier attempt on the feature left it."""
    _project(loop)
    same = success(_start("a-cart", "total = (\n"))
    run = loop.run(same, same, same, success(_finish("b-login")), max_iterations=4)
    (aside,) = run.named("feature_set_aside")
    assert aside["attempts"] == [1, 2, 3]
    assert aside["endings"] == ["it finished, leaving the files as the others did"] * 3


def _reads_of_a_run(tmp_path: Path, iterations: int, monkeypatch: pytest.MonkeyPatch) -> int:
    loop = Loop(tmp_path / str(iterations), ScheduledClock())
    loop.paths.automaker.mkdir(parents=True)
    loop.paths.app_spec.write_text("# Shop\nA small shop.\n")
    _project(loop)
    reads: list[str] = []
    real = features._read  # every read of a feature file, loaded alone or with the others

    def spy(path: str, root: str) -> tuple[str, Any, str | None] | None:
        reads.append(path)
        return real(path, root)

    monkeypatch.setattr(features, "_read", spy)
    loop.run(*[success()] * iterations, max_iterations=iterations)
    monkeypatch.undo()
    return len(reads)


def test_an_attempt_reads_the_feature_files_for_status_md_only(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 33: the features in progress at an attempt's start come from the status.md
    refresh's own read of the feature files (165 ms a read at 5,000 features): three reads an
    attempt, that one, the completion check's and the board guard's snapshot, not four."""
    one, three = (_reads_of_a_run(tmp_path, n, monkeypatch) for n in (1, 3))
    assert (three - one) / 2 == 2 * 3  # two feature files, three reads each an attempt
