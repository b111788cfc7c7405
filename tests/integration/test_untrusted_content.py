"""Every file read from the project is untrusted content (issue 13 items 6, 7, 8, 11, 14): a
lone surrogate, deep nesting, a FIFO, a giant file or a link out of the project is reported as
what it is, in one line, and never hangs aidd, crashes it or reaches a prompt."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from aidd.project.paths import ProjectPaths
from tests.conftest import FakeAgent
from tests.featurefiles import feat, write
from tests.integration.runs import WIDE_LIMITS

SECRET = "aws_secret_access_key = hunter2"


def _aidd(env: dict[str, str], project: Path, *args: str, limit_s: float = 30,
          memory: int = 1 << 30) -> subprocess.CompletedProcess[str]:
    """aidd with a wall-clock bound (a FIFO used to hang it) and `memory` of address space."""
    def small() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run([sys.executable, "-m", "aidd", "--project-dir", str(project), *args],
                          env=env, capture_output=True, text=True, timeout=limit_s,
                          stdin=subprocess.DEVNULL, preexec_fn=small)


def _no_crash(done: subprocess.CompletedProcess[str]) -> None:
    assert "internal error" not in done.stderr, done.stderr[:1000]
    assert "Traceback" not in done.stderr + done.stdout


def test_a_lone_surrogate_makes_the_feature_invalid_not_a_crash(
        env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    paths = ProjectPaths(project)
    write(paths, "feature-1-a", feat(description="fine"))
    bad = paths.features / "feature-2-b" / "feature.json"
    bad.parent.mkdir(parents=True)
    bad.write_text(json.dumps(feat(description="x")).replace('"x"', '"UI \\ud83d"'))
    for args in (("--status",), ("--status", "--json"), ("--check-features",)):
        done = _aidd(env, project, *args)
        _no_crash(done)
        assert done.returncode in (0, 7), done.stderr
    check = _aidd(env, project, "--check-features")
    assert "lone UTF-16 surrogate" in check.stdout
    done = _aidd(env, project, "--max-iterations", "1", *WIDE_LIMITS)
    _no_crash(done)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in paths.iterations.glob("*.log")) == ["001.log"]


@pytest.mark.parametrize("name", ["opencode.json", ".automaker/aidd-state.json"])
def test_json_nested_too_deep_is_ignored_with_a_warning(
        env: dict[str, str], fake_agent: FakeAgent, project: Path, name: str) -> None:
    target = project / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("[" * 100_000 + "]" * 100_000)
    done = _aidd(env, project, "--max-iterations", "1", *WIDE_LIMITS)
    _no_crash(done)
    assert done.returncode == 0, done.stderr


FIFOS = [
    (".automaker/todo.md", ("--status",)),
    (".automaker/aidd-state.json", ("--max-iterations", "1", *WIDE_LIMITS)),
    (".automaker/roadmap.json", ("--status", "--milestone", "m1")),
    (".automaker/.project_completion_pending", ("--status",)),
    (".automaker/.project_completed", ("--status",)),
    (".automaker/.project_completed", ("--max-iterations", "1", *WIDE_LIMITS)),
    (".automaker/features/feature-1-a/feature.json", ("--check-features",)),
    (".automaker/prompts/onboarding.md", ("--max-iterations", "1", *WIDE_LIMITS)),
    (".automaker/prompts/audits/SECURITY.md", ("--audit", "SECURITY", "--max-iterations", "1",
                                               *WIDE_LIMITS)),
]


@pytest.mark.parametrize(("name", "args"), FIFOS, ids=[n for n, _ in FIFOS])
def test_a_fifo_never_hangs_aidd(env: dict[str, str], fake_agent: FakeAgent, project: Path,
                                 name: str, args: tuple[str, ...]) -> None:
    (project / ".automaker" / "features").mkdir(parents=True)
    fifo = project / name
    fifo.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(fifo)
    done = _aidd(env, project, *args, limit_s=30)
    _no_crash(done)
    assert done.stderr.count("\n") <= 1, done.stderr


def test_a_giant_feature_file_is_invalid_not_loaded(
        env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    big = project / ".automaker" / "features" / "feature-1-a" / "feature.json"
    big.parent.mkdir(parents=True)
    with big.open("wb") as fh:
        fh.truncate(1 << 30)  # sparse: 1 GiB that costs nothing to make
    for args in (("--check-features",), ("--status",)):
        done = _aidd(env, project, *args)
        _no_crash(done)
    assert "larger than 16 MiB" in _aidd(env, project, "--check-features").stdout


@pytest.fixture
def outside_text(tmp_path: Path) -> Path:
    path = tmp_path / "outside.md"
    path.write_text(SECRET + "\n")
    return path


@pytest.mark.parametrize("name", ["prompts/onboarding.md", "prompts/audits/SECURITY.md"])
def test_a_prompt_file_linked_out_of_the_project_never_reaches_the_agent(
        env: dict[str, str], fake_agent: FakeAgent, project: Path, outside_text: Path,
        name: str) -> None:
    link = project / ".automaker" / name
    link.parent.mkdir(parents=True)
    link.symlink_to(outside_text)
    args = ("--audit", "SECURITY") if "audits" in name else ()
    done = _aidd(env, project, *args, "--max-iterations", "1", *WIDE_LIMITS)
    _no_crash(done)
    assert done.returncode == 7, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "outside the project" in done.stderr
    assert link.name in done.stderr
    assert SECRET not in done.stderr
    assert fake_agent.records() == []
    assert not any(SECRET in p.read_text() for p in project.rglob("*.prompt.md"))


@pytest.mark.parametrize("target", [".automaker/events.jsonl", ".automaker/aidd.lock",
                                    ".automaker/features/feature-1-a/feature.json",
                                    ".automaker/aidd-state.json", ".automaker/.stop",
                                    ".automaker/Status.md", ".automaker/.project_completed",
                                    ".automaker/iterations/001.prompt.md",
                                    ".automaker/aidd-crash-20260101T000000Z-1.txt"])
def test_a_copy_list_may_not_overwrite_aidds_run_files(
        env: dict[str, str], fake_agent: FakeAgent, project: Path, tmp_path: Path,
        target: str) -> None:
    source = tmp_path / "payload.txt"
    source.write_text("payload\n")
    home = Path(env["AIDD_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "copyfiles.txt").write_text(f"{source} -> {target}\n")
    done = _aidd(env, project, "--max-iterations", "1", *WIDE_LIMITS)
    _no_crash(done)
    assert done.returncode == 0, done.stderr
    assert "run files or the feature metadata" in done.stdout
    written = project / target
    assert not written.exists() or written.read_text() != "payload\n"


def test_a_fifo_as_a_copy_source_is_skipped_with_a_warning(
        env: dict[str, str], fake_agent: FakeAgent, project: Path, tmp_path: Path) -> None:
    source = tmp_path / "pipe"
    os.mkfifo(source)
    home = Path(env["AIDD_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "copyfiles.txt").write_text(f"{source} -> copied.txt\n")
    done = _aidd(env, project, "--max-iterations", "1", *WIDE_LIMITS)
    _no_crash(done)
    assert done.returncode == 0, done.stderr
    assert "is not a regular file" in done.stdout
    assert not (project / "copied.txt").exists()


GIANTS = [
    (".automaker/todo.md", ("--status",)),
    (".automaker/roadmap.json", ("--status", "--milestone", "m1")),
    (".automaker/aidd-state.json", ("--max-iterations", "1", *WIDE_LIMITS)),
    ("opencode.json", ("--max-iterations", "1", *WIDE_LIMITS)),
    (".automaker/prompts/onboarding.md", ("--max-iterations", "1", *WIDE_LIMITS)),
    (".automaker/prompts/audits/SECURITY.md", ("--audit", "SECURITY", "--max-iterations", "1",
                                               *WIDE_LIMITS)),
]


@pytest.mark.parametrize(("name", "args"), GIANTS, ids=[n for n, _ in GIANTS])
def test_a_giant_project_file_is_never_loaded(env: dict[str, str], fake_agent: FakeAgent,
                                              project: Path, name: str,
                                              args: tuple[str, ...]) -> None:
    """1 GiB (sparse) under 512 MiB of address space: loading it whole would fail."""
    big = project / name
    big.parent.mkdir(parents=True, exist_ok=True)
    with big.open("wb") as fh:
        fh.truncate(1 << 30)
    # A checkpoint hashes the 1 GiB a project file holds (git add: ~10 s quiet, 30 s and more
    # on a loaded two-core machine); the bound is for a hang, not for git's speed.
    done = _aidd(env, project, *args, memory=512 << 20, limit_s=120)
    _no_crash(done)
    assert "MemoryError" not in done.stderr
    assert done.stderr.count("\n") <= 1, done.stderr
    if done.returncode not in (0, 3):  # refused: one line naming the file and its limit
        assert done.returncode == 7, done.stderr
        assert "larger than" in done.stderr, done.stderr
        assert Path(name).name in done.stderr, done.stderr


@pytest.mark.parametrize(("value", "why"), [('"Sec \\ud83d"', "surrogate"),
                                            ("[" * 100_000 + "]" * 100_000, "nested too deeply")],
                         ids=["surrogate", "deep"])
def test_bad_text_in_an_audit_definition_is_invalid_not_a_crash(
        env: dict[str, str], fake_agent: FakeAgent, project: Path, value: str, why: str) -> None:
    shipped = (Path(__file__).parents[2] / "prompts" / "audits" / "SECURITY.md").read_text()
    local = project / ".automaker" / "prompts" / "audits" / "SECURITY.md"
    local.parent.mkdir(parents=True)
    local.write_text(shipped.replace("title: Security", f"title: {value}", 1))
    done = _aidd(env, project, "--audit", "SECURITY", "--max-iterations", "1", *WIDE_LIMITS)
    _no_crash(done)
    assert done.returncode == 7, done.stderr
    assert why in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr


def test_extraction_never_blocks_on_a_feature_file_that_is_a_fifo(
        env: dict[str, str], fake_agent: FakeAgent, project: Path) -> None:
    """--extract-structured reads the description of the feature the agent wrote to."""
    rel = ".automaker/features/feature-1-a/feature.json"
    (project / rel).parent.mkdir(parents=True)
    os.mkfifo(project / rel)
    fake_agent.script([{"init": True},
                       {"tool": {"name": "write", "input": {"filePath": rel, "content": "{"}}},
                       {"finish": True}])
    done = _aidd(env, project, "--extract-structured", "--max-iterations", "1", *WIDE_LIMITS)
    _no_crash(done)
    assert done.returncode == 0, done.stderr
    assert (project / ".automaker" / "iterations" / "001.json").is_file()
