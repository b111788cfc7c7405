"""The validation gate in the loop: a baseline before the first attempt, the gate after each
successful one, only new failures count; a red gate holds completion back, reaches the next
prompt, and features passed under it are reported (and with gate-revert-passes set back)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from aidd.config import Actions, load_settings
from aidd.console import Console
from aidd.gate.commands import parse_gate
from aidd.project.paths import ProjectPaths
from aidd.run.journal import Journal
from aidd.run.preflight import prepare_run
from aidd.run.supervisor import Supervisor
from tests.conftest import FAKES
from tests.fakes.gate import GREEN, FakeGate, red
from tests.fakes.session import failure, success
from tests.featurefiles import feat, write
from tests.unit.run.conftest import Loop

# The flags as the command line gives them: converted already.
PYTEST = parse_gate([{"name": "pytest", "run": "pytest -q --junitxml=report.xml",
                      "junit": "report.xml"}])


def _passing(project: Path) -> None:
    paths = ProjectPaths(project)
    for n in (1, 2):
        write(paths, f"feature-{n}-x", feat(f"feature-{n}-x", passes=True, status="completed"))


def _failing(project: Path) -> None:
    paths = ProjectPaths(project)
    for n in (1, 2):
        write(paths, f"feature-{n}-x", feat(f"feature-{n}-x", passes=False, status="backlog"))


def _states(run) -> list[str]:  # type: ignore[no-untyped-def]
    return [e["state"] for e in run.named("completion")]


def test_baseline_once_then_the_gate_after_each_successful_attempt(loop: Loop) -> None:
    gate = FakeGate([{}])
    run = loop.run(success(_failing), failure(), success(), fake_gate=gate, gate=PYTEST,
                   max_iterations=3)
    assert run.code == 0
    assert gate.logs == ["001.gate-baseline.log", "001.gate.log", "003.gate.log"]
    (baseline,) = run.named("gate_baseline")
    assert baseline["number"] == 1
    assert baseline["commands"][0] | {"duration_s": 0} == {
        "name": "pytest", "ok": True, "exit": 0, "failures": 0, "timed_out": False,
        "duration_s": 0}
    assert [(e["number"], e["ok"], e["new_failures"]) for e in run.named("gate")] == [
        (1, True, 0), (3, True, 0)]
    assert (loop.paths.iterations / "001.gate.log").read_text() == "fake gate call 2\n"


def test_without_a_gate_nothing_runs(loop: Loop) -> None:
    gate = FakeGate([{}])
    run = loop.run(success(_passing), success(), fake_gate=gate)
    assert run.code == 73
    assert gate.requests == []
    assert not run.named("gate")
    assert not run.named("gate_baseline")


def test_failures_known_at_the_baseline_do_not_block_completion(loop: Loop) -> None:
    gate = FakeGate([{"pytest": red("t::old")}])
    run = loop.run(success(_passing), success(), fake_gate=gate, gate=PYTEST)
    assert run.code == 73
    assert _states(run) == ["pending", "confirmed"]
    assert [(e["new_failures"], e["known_failures"]) for e in run.named("gate")] == [
        (0, 1), (0, 1)]
    assert run.said("gate: pytest: no new failures, 1 known failure")


def test_a_new_failure_holds_completion_back_until_the_gate_is_green(loop: Loop) -> None:
    gate = FakeGate([{}, {"pytest": red("t::old", "t::cart_total")}, {}])
    run = loop.run(success(_passing), success(), success(), fake_gate=gate, gate=PYTEST,
                   max_iterations=6)
    assert run.code == 73
    assert _states(run) == ["held", "pending", "confirmed"]
    assert run.session.kinds == ["initializer", "coding", "todo"]
    red_gate = run.named("gate")[0]
    assert red_gate["new"] == ["t::cart_total", "t::old"]
    assert not red_gate["ok"]
    assert run.said("gate red: pytest: 2 new failures (t::cart_total, t::old)")
    assert run.said("completion held back: the gate has new failures")
    second, third = (r.prompt for r in run.session.requests[1:])
    assert "validation gate is red" in second
    assert "- t::cart_total" in second
    assert "pytest said 1" in second
    assert "validation gate is red" not in third


def test_a_review_that_turns_the_gate_red_is_not_confirmed(loop: Loop) -> None:
    gate = FakeGate([{}, {}, {"pytest": red("t::x")}, {}])
    run = loop.run(success(_passing), success(), success(), success(), fake_gate=gate,
                   gate=PYTEST, max_iterations=8)
    assert run.code == 73
    assert _states(run) == ["pending", "held", "pending", "confirmed"]
    assert run.session.kinds == ["initializer", "todo", "coding", "todo"]


def test_completion_runs_the_gate_again_when_the_last_attempt_failed(loop: Loop) -> None:
    gate = FakeGate([{}, {}, {"pytest": red("t::x")}, {}])
    run = loop.run(success(_passing), failure(), success(), success(), fake_gate=gate,
                   gate=PYTEST, max_iterations=8)
    # The failed review ran no gate after it; the completion check ran it over its work.
    assert gate.logs[:3] == ["001.gate-baseline.log", "001.gate.log", "002.gate.log"]
    assert _states(run)[:2] == ["pending", "held"]
    assert run.code == 73


def test_features_passed_under_a_red_gate_are_reported(loop: Loop) -> None:
    gate = FakeGate([{}, {"pytest": red("t::x")}])
    run = loop.run(success(_passing), fake_gate=gate, gate=PYTEST, max_iterations=1)
    assert run.code == 0
    (event,) = run.named("gate_passes")
    assert event == event | {"number": 1, "features": ["feature-1-x", "feature-2-x"],
                             "reverted": []}
    assert run.said("attempt 001 set passes on feature-1-x, feature-2-x while the gate is red")
    data = json.loads((loop.paths.features / "feature-1-x" / "feature.json").read_text())
    assert data["passes"] is True


def test_gate_revert_passes_sets_them_back_with_a_note(loop: Loop) -> None:
    gate = FakeGate([{}, {"pytest": red("t::x")}])
    loop.paths.features.mkdir(parents=True)
    write(loop.paths, "feature-0-old", feat("feature-0-old", passes=True, status="completed"))
    run = loop.run(success(_passing), fake_gate=gate, gate=PYTEST, max_iterations=1,
                   gate_revert_passes=True)
    (event,) = run.named("gate_passes")
    assert event["reverted"] == ["feature-1-x", "feature-2-x"]
    for name in ("feature-1-x", "feature-2-x"):
        data = json.loads((loop.paths.features / name / "feature.json").read_text())
        assert data["passes"] is False
        assert "attempt 001 left the validation gate red (pytest: exited 1" not in data["gateNote"]
        assert "attempt 001 left the validation gate red (t::x)" in data["gateNote"]
    old = json.loads((loop.paths.features / "feature-0-old" / "feature.json").read_text())
    assert old["passes"] is True
    assert "gateNote" not in old


def test_a_green_gate_reverts_nothing(loop: Loop) -> None:
    gate = FakeGate([{"pytest": GREEN}])
    run = loop.run(success(_passing), fake_gate=gate, gate=PYTEST, max_iterations=1,
                   gate_revert_passes=True)
    assert not run.named("gate_passes")
    data = json.loads((loop.paths.features / "feature-1-x" / "feature.json").read_text())
    assert data["passes"] is True


def test_a_slot_s_gate_runs_in_its_worktree_against_the_baseline(loop: Loop,
                                                                  tmp_path: Path) -> None:
    """--parallel: the gate in a slot's worktree (commands there, the log the project's),
    judged against the run's baseline, tells the slot's journal and leaves the run's own
    verdict (what completion and the single loop's prompt read) alone."""
    gate = FakeGate([{"pytest": red("t::old")}, {"pytest": red("t::old", "t::new")}])
    settings = load_settings({"project-dir": loop.paths.root, "gate": PYTEST}, Actions(),
                             {"PATH": f"{FAKES / 'bin'}:/usr/bin:/bin",
                              "HOME": str(tmp_path / "home")},
                             cwd=tmp_path)
    out = io.BytesIO()
    supervisor = Supervisor(prepare_run(settings, loop.paths, None, loop.clock), loop.clock,
                            console=Console(out), gate=gate)
    gates, tree = supervisor.gates, tmp_path / "tree"
    gates.before_attempt(1)
    events = supervisor.journal.events.tagged(slot=2, feature="f1")
    journal = Journal(supervisor.journal.console, events, loop.clock, loop.paths.root,
                      tag="[slot 2] ")
    verdict = gates.in_worktree(3, tree, journal)
    assert verdict is not None
    assert verdict.new_failures == ("t::new",)
    assert "t::new" in verdict.summary()
    baseline, worktree = gate.requests
    assert (baseline.root, worktree.root, worktree.project) == (
        loop.paths.root, tree, loop.paths.root)
    assert worktree.log == loop.paths.iterations / "003.gate.log"
    (event,) = [json.loads(line) for line in loop.paths.events.read_text().splitlines()
                if '"gate"' in line]
    assert (event["slot"], event["feature"], event["number"], event["new"]) == (
        2, "f1", 3, ["t::new"])
    assert "[slot 2] " in out.getvalue().decode()
    assert gates.latest is None
    assert gates.report == ""
    assert gates.new_failures(3) == ()
