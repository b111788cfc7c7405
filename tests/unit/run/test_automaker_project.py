"""A project AutoMaker created, run through whole aidd loops in-process (issue 18): aidd keeps
its feature set, works only on what is not done, finishes features the way AutoMaker's board
shows them, and completes only when AutoMaker's board would agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aidd.project.paths import ProjectPaths
from tests.automaker import EXPECTED, automaker_problems, copy_fixture, loader_reads
from tests.fakes.session import success
from tests.unit.run.conftest import Loop

_NOT_DONE = [d for d, (state, _) in EXPECTED.items() if state in ("open", "active")]


def _finish(*dirs: str, status: str = "verified") -> Any:
    """What aidd's agent does per its prompt: re-read the file, set passes and status, keep
    everything else."""
    def edit(project: Path) -> None:
        for name in dirs:
            path = ProjectPaths(project).features / name / "feature.json"
            data = json.loads(path.read_text())
            data.update(passes=True, status=status, updatedAt="2026-01-07T02:00:00Z")
            path.write_text(json.dumps(data, indent=2))
    return edit


def _board(*dirs: str) -> Any:
    """Meanwhile a person on AutoMaker's board approves these features (`verified`)."""
    def edit(project: Path) -> None:
        for name in dirs:
            path = ProjectPaths(project).features / name / "feature.json"
            data = json.loads(path.read_text())
            data["status"] = "verified"
            path.write_text(json.dumps(data, indent=2))
    return edit


def _both(*edits: Any) -> Any:
    def edit(project: Path) -> None:
        for one in edits:
            one(project)
    return edit


def test_an_automaker_project_runs_to_completion(loop: Loop) -> None:
    copy_fixture(loop.paths.features)
    originals = loader_reads(loop.paths.features)
    review = ["feature-1767687480000-p0o9i8u7y", "feature-1767687540000-m1n2b3v4c"]
    night = loop.run(
        success(_finish("user-authentication")),
        success(_finish(*[d for d in _NOT_DONE if d != "user-authentication"])),
        max_iterations=8,
    )
    # Nothing left for aidd: the rest waits for the humans, so the night ends without paying
    # for attempts that could only find nothing to do.
    assert night.code == 0, night.console
    # item 13: the AutoMaker set counts as onboarded: no onboarding, no second feature set
    assert night.session.kinds == ["coding", "coding"]
    assert [e["reason"] for e in night.named("phase_end")] == ["awaiting_review"]
    assert "every unfinished feature (1) waits for a human review" in night.console
    _board(*review)(loop.paths.root)  # in the morning they approve on AutoMaker's board
    run = loop.run(success(), max_iterations=8)  # the next run: the completion review
    assert run.code == 73, run.console
    assert run.session.kinds == ["todo"]
    assert [e["state"] for e in run.named("completion")] == ["pending", "confirmed"]
    after = loader_reads(loop.paths.features)
    assert set(after) == set(originals)
    assert automaker_problems(loop.paths.features) == []
    for name, data in originals.items():  # AutoMaker's own keys survive every write
        kept = {k: v for k, v in data.items() if k not in ("status", "passes", "updatedAt")}
        assert {k: after[name][k] for k in kept} == kept, name
    assert {d["status"] for d in after.values()} == {"verified", "completed"}


def test_work_waiting_for_review_is_not_complete(loop: Loop) -> None:
    """Item 6: the agent finished everything it may; completion waits for the human."""
    copy_fixture(loop.paths.features)
    run = loop.run(success(_finish(*_NOT_DONE, "feature-1767687480000-p0o9i8u7y")),
                   success(), max_iterations=3)
    assert run.code == 0
    assert run.session.kinds == ["coding"]  # then only the review is left: the phase ends
    assert [e["reason"] for e in run.named("phase_end")] == ["awaiting_review"]
    assert not run.named("completion") or all(
        e["state"] != "pending" for e in run.named("completion"))
    assert not loop.paths.completion_pending.exists()


def test_an_existing_codebase_without_a_spec_is_onboarded_keeping_the_set(loop: Loop) -> None:
    """Item 13: onboarding runs (no app_spec.txt yet) and is told to keep the set; once the
    spec exists aidd codes."""
    loop.paths.app_spec.unlink()
    (loop.paths.root / "src").mkdir()
    (loop.paths.root / "src" / "app.ts").write_text("export {};\n")
    copy_fixture(loop.paths.features)

    def onboard(project: Path) -> None:
        ProjectPaths(project).app_spec.write_text("# Shop\nWhat exists.\n")

    run = loop.run(success(onboard), success(), max_iterations=2)
    assert run.session.kinds == ["onboarding", "coding"]
    onboarding = run.session.requests[0].prompt
    assert "that is the project's feature set: keep" in " ".join(onboarding.split())
    assert set(loader_reads(loop.paths.features)) == set(EXPECTED)


def _feature(features: Path, fid: str, **fields: Any) -> None:
    (features / fid).mkdir(parents=True, exist_ok=True)
    data = {"id": fid, "category": "Core", "description": f"{fid} works", **fields}
    (features / fid / "feature.json").write_text(json.dumps(data))


def test_nothing_workable_ends_the_phase_before_an_attempt(loop: Loop) -> None:
    """Issue 31 items 1-4: a reopened feature with an old `passes` is not done, a `failed` one
    waits for a person, `running` belongs to another agent, and what depends on them is
    blocked: auto mode would start none of them, so aidd ends at once instead of paying for
    attempts that find nothing to do."""
    f = loop.paths.features
    _feature(f, "feature-1767687300000-a", status="failed")
    _feature(f, "feature-1767687300001-b", status="running")
    _feature(f, "feature-1767687300002-c", status="in_progress", passes=True,
             dependencies=["feature-1767687300000-a"])
    _feature(f, "feature-1767687300003-d", status="pending",
             dependencies=["feature-1767687300002-c"])
    run = loop.run(success(), success(), max_iterations=5)
    assert run.code == 0, run.console
    assert run.session.kinds == []
    assert [e["reason"] for e in run.named("phase_end")] == ["awaiting_review"]
    assert "no unfinished feature (4) is workable" in run.console


def test_pending_and_ready_are_worked_on(loop: Loop) -> None:
    """Issue 31 item 4: auto mode starts `pending` and `ready`; so does aidd's agent."""
    _feature(loop.paths.features, "feature-1767687300000-a", status="pending")
    _feature(loop.paths.features, "feature-1767687300001-b", status="ready")
    run = loop.run(success(), max_iterations=1)
    assert run.session.kinds == ["coding"]
    prompt = " ".join(run.session.requests[0].prompt.split())
    assert "`backlog`, `pending`, `ready`, `in_progress` or missing" in prompt
