"""Links planted in `.automaker/` by a cloned repository or the agent never lead aidd's writes
out of the project (issue 13 item 1): refused before anything is written, or mid-run with
exit 3; the file outside stays byte-identical."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FakeAgent
from tests.integration.runs import READ as READ_STEP
from tests.integration.runs import WIDE_LIMITS, RunAidd, tree_snapshot
from tests.planted import plant

PRECIOUS = "the user's own file\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside"
    target.mkdir()
    (target / "precious.txt").write_text(PRECIOUS)
    return target


def _plant(project: Path, rel: str, target: Path, *, hard: bool = False) -> Path:
    return plant(project / ".automaker" / rel, "hardlink" if hard else "symlink", target)


@pytest.mark.parametrize("rel", ["iterations", "audits"])
def test_a_symlinked_subdirectory_is_refused_before_anything_is_written(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
        outside: Path, rel: str) -> None:
    _plant(project, rel, outside)
    before = tree_snapshot(project)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *WIDE_LIMITS, env=env)
    assert res.code == 3, res.err
    assert res.err.count("\n") == 1, res.err
    assert "is a symlink" in res.err
    assert tree_snapshot(project) == before
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"]
    assert fake_agent.records() == []


def test_a_symlinked_automaker_is_refused(run_aidd: RunAidd, env: dict[str, str],
                                          fake_agent: FakeAgent, project: Path,
                                          outside: Path) -> None:
    (project / ".automaker").symlink_to(outside)
    for args in (("--max-iterations", "1", *WIDE_LIMITS), ("--stop",)):
        res = run_aidd("--project-dir", str(project), *args, env=env)
        assert res.code == 3, res.err
        assert "symlink" in res.err
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"]
    assert fake_agent.records() == []


@pytest.mark.parametrize(("rel", "hard"), [("events.jsonl", False), ("events.jsonl", True)])
def test_a_planted_file_link_is_never_written_through(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
        outside: Path, rel: str, hard: bool) -> None:
    _plant(project, rel, outside / "precious.txt", hard=hard)
    before = tree_snapshot(project)
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1", *WIDE_LIMITS, env=env)
    assert res.code == 3, res.err
    assert tree_snapshot(project) == before  # refused before anything was written
    assert res.err.count("\n") == 1, res.err
    assert (outside / "precious.txt").read_text() == PRECIOUS
    assert "Traceback" not in res.out + res.err


def test_a_log_planted_for_the_next_iteration_is_not_opened_through(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
        outside: Path) -> None:
    plant = f"ln -s {outside / 'precious.txt'} .automaker/iterations/002.log"
    fake_agent.script([{"spawn": ["sh", "-c", plant]}, {"sleep": 0.3}, {"say": "ok"},
                       {"finish": True}])
    res = run_aidd("--project-dir", str(project), "--max-iterations", "2", *WIDE_LIMITS, env=env)
    assert res.code == 3, res.err
    assert "002.log" in res.err
    assert (outside / "precious.txt").read_text() == PRECIOUS


def test_an_agent_that_swaps_iterations_for_a_link_mid_run_ends_the_run_with_3(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path,
        outside: Path) -> None:
    swap = (f"mv .automaker/iterations .automaker/iterations.old && "
            f"ln -s {outside} .automaker/iterations")
    fake_agent.script([{"spawn": ["sh", "-c", swap]}, {"sleep": 0.5}, {"say": "ok"},
                       {"finish": True}])
    res = run_aidd("--project-dir", str(project), "--max-iterations", "3", *WIDE_LIMITS, env=env)
    assert res.code == 3, res.err
    assert "symlink" in res.err
    assert res.err.count("\n") == 1, res.err
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"]
    assert (outside / "precious.txt").read_text() == PRECIOUS
    assert not (project / ".automaker" / "aidd.lock").exists()


def test_a_log_the_agent_swapped_for_a_fifo_does_not_hang_the_run_end(
        run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    """The run's end extracts and cleans the logs it wrote (issue 27 item 15): an agent that
    put a FIFO where its log was gets a warning for each, and the run ends at once."""
    swap = "rm .automaker/iterations/001.log && mkfifo .automaker/iterations/001.log"
    fake_agent.script([{"spawn": ["sh", "-c", swap], "wait": True}, READ_STEP,
                       {"say": "done"}, {"finish": True}])
    res = run_aidd("--project-dir", str(project), "--max-iterations", "1",
                   "--extract-structured", *WIDE_LIMITS, env=env, timeout=45)
    assert res.code == 0, res.err
    assert "could not extract 001.log" in res.out + res.err
    assert "could not clean 001.log" in res.out + res.err
