"""REL-10, REL-4: every input a user or an agent controls, made bad. Each gives one clear line
(or a documented warning), the documented exit code, and nothing written outside the project.

Flags are generated from the option table, so a new flag is covered the day it is added; the
hand-written cases of tests/integration/test_cli_args.py are not repeated. Files an agent
writes (todo.md, roadmap.json, feature.json) and names a user types (audits, `--feature`,
copy-list lines) are fuzzed with hypothesis in-process, plus a few real `aidd` processes.
feature.json content alone is fuzzed in tests/unit/project/test_features_property.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aidd import cli
from aidd.errors import AiddError, ExitCode
from aidd.options import OPTIONS, Kind, Option
from aidd.project.paths import ProjectPaths
from tests.integration.runs import tree_snapshot

pytestmark = pytest.mark.reliability

REPO = Path(__file__).resolve().parents[2]
FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

BAD_VALUES: dict[Kind, tuple[str, ...]] = {
    Kind.INT: ("abc", "-1", "1.5", "2147483648", "", " 3"),
    Kind.SECONDS: ("abc", "-5", "0.5", "99999999999", ""),
    Kind.MODEL: ("a b", "-x", "", "m" * 201, "a;rm -rf /"),
    Kind.CLI: ("foo", "zrun", ""),
    Kind.LIST: (",", "A/B", "../x", " , "),
}
# Flags whose bad values are not a matter of their kind alone: (args, exit code, named).
SPECIAL_CASES = [
    (("--filter-by", "nosuchfield", "--filter", "x"), 2, "--filter-by"),
    (("--filter-by", "priority", "--filter", "high"), 2, "priority"),
    (("--filter-by", "passes", "--filter", "maybe"), 2, "passes"),
    (("--filter-by", "dependencies"), 2, "--filter"),
    (("--feature", ""), 2, "--feature"),
    (("--feature", "a/b"), 2, "--feature"),
    (("--feature", ".."), 2, "--feature"),
    (("--milestone", "M1"), 3, "roadmap.json"),
    (("--audit-on-completion", ","), 2, "--audit-on-completion"),
    (("--audit", "no-such-audit"), 3, "no-such-audit"),
    (("--audit", "a b"), 2, "a b"),
    (("--todo", "yes"), 2, "yes"),
    (("--stop-when-done=false",), 2, "--stop-when-done"),
    (("--prompt",), 2, "--prompt"),
]


def _value_options() -> list[tuple[str, str]]:
    return [(opt.flag, bad) for opt in OPTIONS for bad in BAD_VALUES.get(opt.kind, ())]


def _main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = cli.main(list(argv))
    return code, capsys.readouterr().err


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME/config; the project is `sandbox/proj` (not created); nothing may appear
    anywhere else under `sandbox`."""
    for key in [k for k in os.environ if k.startswith("AIDD_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("AIDD_HOME", str(tmp_path / "aidd-home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


# -- flags ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("flag", "bad"), _value_options())
def test_every_flag_rejects_bad_values(sandbox: Path, capsys: pytest.CaptureFixture[str],
                                       flag: str, bad: str) -> None:
    """CLI-1..5: exit 2, one line naming the flag, nothing created."""
    before = tree_snapshot(sandbox)
    code, err = _main(capsys, "--project-dir", str(sandbox / "proj"), flag, bad)
    assert code == ExitCode.INVALID_ARGS, err
    assert len(err.strip().splitlines()) == 1, err
    assert flag in err or "--audit" in err or bad in err, err
    assert tree_snapshot(sandbox) == before


@pytest.mark.parametrize(("args", "code", "needle"), SPECIAL_CASES)
def test_special_flag_cases(sandbox: Path, capsys: pytest.CaptureFixture[str],
                            monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], code: int,
                            needle: str) -> None:
    """Run flags; no agent on PATH, so a check that wrongly passed would end in 8 (CLI-20)."""
    project = sandbox / "proj"
    (project / ".automaker" / "features").mkdir(parents=True)
    (project / "README.md").write_text("x\n")
    monkeypatch.setenv("PATH", str(sandbox / "home"))
    before = tree_snapshot(sandbox)
    got, err = _main(capsys, "--project-dir", str(project), *args)
    assert got == code, err
    assert len(err.strip().splitlines()) == 1, err
    assert needle in err, err
    assert tree_snapshot(sandbox) == before


def test_prompt_that_is_not_utf8_exits_2(sandbox: Path) -> None:
    """CLI `--prompt` must be valid UTF-8; argv bytes cannot be passed in-process."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(sandbox)}
    env = {k: v for k, v in env.items() if not k.startswith("AIDD_")}
    done = subprocess.run([sys.executable.encode(), b"-m", b"aidd", b"--project-dir",
                           str(sandbox / "proj").encode(), b"--prompt", b"bad \xff text"],
                          env=env, cwd=sandbox, capture_output=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert b"--prompt" in done.stderr
    assert not (sandbox / "proj").exists()


# -- config keys and AIDD_* variables ----------------------------------------------------------
def _configurable() -> list[tuple[Option, str]]:
    return [(opt, bad) for opt in OPTIONS if opt.configurable
            for bad in BAD_VALUES.get(opt.kind, ())[:2]]


@pytest.mark.parametrize(("opt", "bad"), _configurable(), ids=lambda v: getattr(v, "name", v))
def test_every_config_key_and_variable_rejects_bad_values(
        sandbox: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        opt: Option, bad: str) -> None:
    """CLI-32..34: the same rules for a YAML key and an AIDD_* variable, exit 2 naming them."""
    project = sandbox / "proj"
    config = project / ".automaker" / "aidd.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({opt.name: bad}) + "\n")  # JSON is YAML
    before = tree_snapshot(sandbox)
    code, err = _main(capsys, "--project-dir", str(project), "--stop")
    assert code == 2, err
    assert str(config) in err
    assert opt.name in err
    config.unlink()
    monkeypatch.setenv(opt.env, bad)
    code, err = _main(capsys, "--project-dir", str(project), "--stop")
    if bad.strip() == "" and opt.kind in (Kind.LIST, Kind.MODEL, Kind.CLI) and code != 2:
        pytest.skip(f"{opt.env}='' means unset")  # an empty variable may mean "not set"
    assert code == 2, err
    assert opt.env in err
    assert len(err.strip().splitlines()) == 1, err
    assert not (project / ".automaker" / ".stop").exists()
    before.discard(str(config.relative_to(sandbox)))
    assert tree_snapshot(sandbox) == before


@pytest.mark.parametrize("text", ["42\n", "'just a string'\n", "null_key: [\n", "{a: {b: c}}\n",
                                  "\xff\xfe", "timeout: !!python/object:os.system x\n"])
def test_config_files_that_are_not_mappings_or_unsafe(
        sandbox: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    project = sandbox / "proj"
    config = project / ".automaker" / "aidd.yaml"
    config.parent.mkdir(parents=True)
    config.write_bytes(text.encode("utf-8", "surrogateescape") if text != "\xff\xfe"
                       else b"\xff\xfe")
    code, err = _main(capsys, "--project-dir", str(project), "--stop")
    assert code == 2, err
    assert str(config) in err
    assert len(err.strip().splitlines()) == 1, err


# -- files an agent writes ---------------------------------------------------------------------
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                 max_size=4),
    max_leaves=15,
)
ROADMAPS = (
    JSON_VALUES
    | st.fixed_dictionaries({"milestones": JSON_VALUES, "features": JSON_VALUES})
    | st.fixed_dictionaries({
        "milestones": st.dictionaries(st.sampled_from(["M1", "M2"]), JSON_VALUES, max_size=2),
        "features": st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=3)})
)


def _attempt(func: Callable[..., Any], *args: Any) -> tuple[Any, AiddError | None]:
    """The result, or the expected error (anything else propagates: a crash fails the test)."""
    try:
        return func(*args), None
    except AiddError as exc:
        return None, exc


def _project(tmp_path: Path) -> ProjectPaths:
    paths = ProjectPaths(tmp_path / "proj")
    paths.features.mkdir(parents=True, exist_ok=True)
    return paths


@FAST
@given(data=ROADMAPS | st.binary(max_size=64).map(lambda b: {"raw": b.hex()}),
       name=st.sampled_from(["M1", "M2", "", "../x"]))
def test_random_roadmaps_give_2_3_or_7(tmp_path: Path, data: Any, name: str) -> None:
    """FEA-42: any roadmap.json content resolves or fails with 2 / 7, never a crash."""
    from aidd.project.filters import load_milestone

    paths = _project(tmp_path)
    paths.roadmap.write_text(json.dumps(data))
    found, error = _attempt(load_milestone, paths, name)
    if error is not None:
        assert error.exit_code in (2, 7)
        assert error.message.strip()
    else:
        assert found.name == name


@FAST
@given(text=st.text(max_size=400) | st.binary(max_size=200).map(
    lambda b: b.decode("utf-8", "surrogateescape")))
def test_random_todo_never_crashes_status(tmp_path: Path, text: str) -> None:
    """FEA-33, CMP-20: any todo.md content is counted, never a crash."""
    from datetime import UTC, datetime

    from aidd.project.completion import evaluate
    from aidd.reports.status import build_status
    from aidd.reports.statusjson import status_json
    from aidd.reports.statustext import render_status_text

    paths = _project(tmp_path)
    paths.todo.write_bytes(text.encode("utf-8", "surrogateescape"))
    report = build_status(paths, None, datetime.now(UTC))
    assert "TODO" in render_status_text(report).upper()
    json.dumps(status_json(report))
    evaluate(paths, None)


# -- names a user types ------------------------------------------------------------------------
NAMES = st.text(max_size=30) | st.sampled_from(
    ["..", "../x", "/etc/passwd", "a/b", "a\0b", "x.md", "SECURITY", "security.md", " ", "~",
     "a" * 300, "-rf", "$(id)", "CON", "é"])


@FAST
@given(name=NAMES)
def test_random_audit_names(name: str) -> None:
    """AUD-2: outside the grammar 2, unknown 3 (listing the audits), else a definition."""
    from aidd.audits.definitions import resolve_audits

    found, error = _attempt(resolve_audits, [name], None)
    if error is not None:
        assert error.exit_code in (2, 3, 7)
        assert error.message.strip()
    else:
        assert len(found) == 1
        assert "/" not in found[0].name


@FAST
@given(value=NAMES)
def test_random_feature_values_stay_inside_features(tmp_path: Path, value: str) -> None:
    """FEA-43: `--feature` resolves to a directory under features/, or fails with 2/3."""
    from aidd.project.filters import resolve_feature

    paths = _project(tmp_path)
    for name in ("feature-1-login", "feature-2-logout"):
        target = paths.features / name / "feature.json"
        target.parent.mkdir(exist_ok=True)
        target.write_text(json.dumps({"id": name, "category": "c", "description": "d",
                                      "title": None}))
    focus, error = _attempt(resolve_feature, paths, value)
    if error is not None:
        assert error.exit_code in (2, 3)
    else:
        assert focus.path.resolve().parent == paths.features.resolve()


TARGETS = st.sampled_from(
    ["../out", "/abs/out", "a/../../out", "link/out", "link", ".git/x", ".automaker",
     ".automaker/iterations", ".", "ok/file", "deep/a/b", "x -> y", ""]) | st.text(
    alphabet="ab./-> ~", max_size=12)


@FAST
@given(lines=st.lists(st.tuples(st.sampled_from(["srcfile", "srcdir", "missing", "~/nope"]),
                                TARGETS), max_size=6),
       which=st.sampled_from(["copyfiles.txt", "copydirs.txt"]))
def test_random_copy_lists_never_write_outside(tmp_path: Path, lines: list[tuple[str, str]],
                                               which: str) -> None:
    """LAY-33, REL-4: whatever the lines say, nothing changes outside the project; a refused
    entry is a warning naming file:line."""
    import shutil

    from aidd.project.copylists import ListSources
    from aidd.project.sync import sync_project

    base = tmp_path / "case"
    shutil.rmtree(base, ignore_errors=True)
    project = base / "proj"
    project.mkdir(parents=True)
    (project / ".git").mkdir()
    outside = base / "outside"
    outside.mkdir()
    (project / "link").symlink_to(outside)
    lists = base / "lists"
    (lists / "srcdir").mkdir(parents=True)
    (lists / "srcdir" / "f.txt").write_text("dir file\n")
    (lists / "srcfile").write_text("file\n")
    text = "".join(f"{src} -> {dst}\n" if dst else f"{src}\n" for src, dst in lines)
    (lists / which).write_text(text)
    before = tree_snapshot(base)
    result = sync_project(project, ListSources(home=base / "home", aidd_home=lists,
                                               checkout=None))
    after = tree_snapshot(base)
    changed = {p for p in after ^ before if not p.startswith("proj/")}
    assert changed == set()
    assert list(outside.iterdir()) == []
    assert not (project / ".git" / "x").exists()
    for message in result.messages:
        if message.level.value == "warn":
            assert f"{which}:" in message.text or str(lists) in message.text


# -- a few real processes ----------------------------------------------------------------------
NASTY_FEATURES = {
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "bom": b"\xef\xbb\xbf" + json.dumps({"id": "feature-1-bom"}).encode(),
    "latin1": b'{"id": "feature-1-x", "description": "caf\xe9"}',
    "nan": b'{"id": NaN, "priority": Infinity, "category": "c", "description": "d"}',
    "huge-int": b'{"id": "feature-1-h", "priority": 1' + b"0" * 5000 + b"}",
    "dup-keys": b'{"id": "feature-1-d", "id": 3}',
    "empty": b"",
    "list": b"[1, 2, 3]",
    "nul": b'{"id": "feature-1-\x00"}',
}


@pytest.fixture
def nasty_project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    features = project / ".automaker" / "features"
    for name, data in NASTY_FEATURES.items():
        (features / name).mkdir(parents=True)
        (features / name / "feature.json").write_bytes(data)
    (features / "dir-named-file" / "feature.json").mkdir(parents=True)
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"id": "feature-9-out", "category": "c", "description": "d",
                                   "title": None}))
    (features / "escape").mkdir()
    (features / "escape" / "feature.json").symlink_to(outside)
    (features / "loop").mkdir()
    (features / "loop" / "sub").symlink_to(features / "loop")
    (project / ".automaker" / "todo.md").write_bytes(b"- [ ] \xff\xfe broken\n\x00\n- [x] ok")
    return project


@pytest.mark.parametrize(("args", "codes"), [
    (("--check-features",), {7}),
    (("--status",), {0}),
    (("--status", "--json"), {0}),
])
def test_nasty_feature_files_through_the_real_cli(nasty_project: Path, tmp_path: Path,
                                                  args: tuple[str, ...], codes: set[int]) -> None:
    """FEA-21: one bad file is reported for itself; the process never crashes; only
    `status.md` is written."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIDD_")}
    env.update(PYTHONPATH=str(REPO), HOME=str(tmp_path / "home"))
    before = tree_snapshot(tmp_path)
    done = subprocess.run([sys.executable, "-m", "aidd", "--project-dir", str(nasty_project),
                           *args], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode in codes, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert "internal error" not in done.stderr
    if "--json" in args:
        data = json.loads(done.stdout)
        assert data["features"]["invalid"] >= len(NASTY_FEATURES) - 1
    if "--check-features" in args:
        assert "deep" in done.stdout
        assert "nan" in done.stdout
        assert "outside" not in done.stdout  # the symlink out of the project is not followed
    new = tree_snapshot(tmp_path) - before
    assert new <= {"proj/.automaker/status.md", "home"}, new
