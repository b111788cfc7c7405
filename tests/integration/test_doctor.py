"""`aidd --doctor` as a new user runs it on a fresh machine: the real aidd with the fake CLIs
first on PATH, one test per check with a case that passes it and one that does not, the exit
codes, `--json`, `--offline`, and what a run makes of the quick checks (issue 17 part 3)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest

from aidd.agents.hints import PROBE_PROMPT
from tests.conftest import FakeAgent
from tests.gitrepo import git
from tests.integration.runs import LIMITS, OK, RunAidd, tree_snapshot
from tests.localhttp import recorder
from tests.planted import plant

SECRET = "hb-s3cret-path"
CLAUDE_401 = [{"init": True}, {"result": {"is_error": True, "api_error_status": 401,
                                          "result": "Invalid API key · Please run /login"}},
              {"exit": 1}]
OPENCODE_401 = [{"error": {"name": "APIError", "message": "Unauthorized", "status": 401}},
                {"exit": 1}]
ANSWER = [{"init": True}, {"say": "OK"}, {"finish": True}]


class Doctor:
    """Runs `aidd --doctor --json` on the project and reads its checks by name."""

    def __init__(self, run_aidd: RunAidd, env: dict[str, str], project: Path) -> None:
        self.run_aidd, self.env, self.project = run_aidd, env, project

    def __call__(self, *args: str, env: dict[str, str] | None = None
                 ) -> tuple[int, dict[str, dict[str, Any]]]:
        res = self.run_aidd("--doctor", "--json", "--project-dir", str(self.project), *args,
                            env=env or self.env, timeout=120)
        assert res.err == "", res.err
        doc = json.loads(res.out)
        assert doc["exit_code"] == res.code
        return res.code, {check["name"]: check for check in doc["checks"]}

    def checks(self, *args: str, env: dict[str, str] | None = None
               ) -> dict[str, dict[str, Any]]:
        """The checks alone, when the exit code does not matter."""
        return self(*args, env=env)[1]


@pytest.fixture
def doctor(run_aidd: RunAidd, env: dict[str, str], project: Path) -> Doctor:
    return Doctor(run_aidd, env, project)


def status(checks: dict[str, dict[str, Any]], name: str) -> str:
    return str(checks[name]["status"])


# -- the whole doctor -------------------------------------------------------------------------
def test_a_fresh_machine_with_a_working_cli_is_all_ok_and_nothing_is_written(
        run_aidd: RunAidd, env: dict[str, str], project: Path, fake_agent: FakeAgent) -> None:
    fake_agent.script(ANSWER)
    before = tree_snapshot(project)
    res = run_aidd("--doctor", "--project-dir", str(project), env=env, timeout=120)
    assert res.code == 0, res.out + res.err
    lines = res.out.splitlines()
    assert lines[0].startswith("aidd ")
    assert "--cli opencode" in lines[0]
    checks = lines[1:-1]
    assert [line.split()[0] for line in checks] == ["ok"] * len(checks), res.out
    names = [line.split()[1] for line in checks]
    for name in ("cli", "nested", "root", "auth", "disk", "git", "repository", "checkpoints",
                 "project", "links", "spec", "lock", "user", "project", "variables", "copy",
                 "gate", "notify"):
        assert name in names, (name, names)
    assert lines[-1].startswith("doctor: ")
    assert lines[-1].endswith("0 failures; exit 0")
    assert tree_snapshot(project) == before


def test_json_has_one_record_per_check(doctor: Doctor, fake_agent: FakeAgent) -> None:
    fake_agent.script(ANSWER)
    res = doctor.run_aidd("--doctor", "--json", "--project-dir", str(doctor.project),
                          env=doctor.env, timeout=120)
    doc = json.loads(res.out)
    assert set(doc) == {"aidd_version", "cli", "project_dir", "offline", "exit_code", "summary",
                        "checks"}
    assert doc["summary"]["fail"] == 0
    for check in doc["checks"]:
        assert set(check) == {"name", "status", "detail", "fix", "exit_code"}
        assert check["status"] in ("ok", "warn", "fail", "skip")


def test_offline_needs_doctor(run_aidd: RunAidd, env: dict[str, str], project: Path) -> None:
    res = run_aidd("--offline", "--project-dir", str(project), env=env)
    assert res.code == 2
    assert res.err.strip() == "aidd: error: --offline needs --doctor"


# -- the CLI ----------------------------------------------------------------------------------
def test_cli_missing_fails_with_8_and_its_install_command(doctor: Doctor) -> None:
    code, checks = doctor("--cli", "kilocode", env={**doctor.env, "PATH": "/usr/bin:/bin"})
    assert code == 8
    assert status(checks, "cli") == "fail"
    assert "npm i -g @kilocode/cli" in checks["cli"]["fix"]
    assert status(checks, "auth") == "skip"


def test_cli_untested_version_warns(doctor: Doctor, fake_agent: FakeAgent) -> None:
    fake_agent.script(ANSWER)
    code, checks = doctor("--cli", "kilocode", "--offline")
    assert (code, status(checks, "cli")) == (0, "ok")
    code, checks = doctor("--offline", env={**doctor.env, "FAKE_AGENT_VERSION": "0.9.0"})
    assert (code, status(checks, "cli")) == (0, "warn")
    assert "0.9.0" in checks["cli"]["detail"]


# -- the login probe ----------------------------------------------------------------------------
def test_auth_ok_sends_the_tiny_prompt_in_the_project(doctor: Doctor,
                                                      fake_agent: FakeAgent) -> None:
    fake_agent.script(ANSWER)
    code, checks = doctor("--cli", "claude-code")
    assert (code, status(checks, "auth")) == (0, "ok")
    (record,) = fake_agent.records()
    assert record["cwd"] == str(doctor.project)
    assert "--print" in record["argv"]
    assert record["stdin_sha256"] == hashlib.sha256(PROBE_PROMPT.encode()).hexdigest()


@pytest.mark.parametrize(("cli", "script", "fix"), [
    ("claude-code", CLAUDE_401, "claude auth login"),
    ("opencode", OPENCODE_401, "opencode auth login")])
def test_auth_refused_fails_with_8_and_the_clis_message(
        doctor: Doctor, fake_agent: FakeAgent, cli: str, script: list[dict[str, Any]],
        fix: str) -> None:
    fake_agent.script(script)
    code, checks = doctor("--cli", cli)
    assert (code, status(checks, "auth")) == (8, "fail")
    assert fix in checks["auth"]["fix"]
    assert "Invalid API key" in checks["auth"]["detail"] or (
        "Unauthorized" in checks["auth"]["detail"])


def test_offline_sends_no_prompt(doctor: Doctor, fake_agent: FakeAgent) -> None:
    fake_agent.script(OPENCODE_401)
    code, checks = doctor("--offline")
    assert (code, status(checks, "auth")) == (0, "skip")
    assert fake_agent.records() == []


# -- the machine ------------------------------------------------------------------------------
def test_nested_agent_variables_warn(doctor: Doctor) -> None:
    code, checks = doctor("--offline")
    assert status(checks, "nested") == "ok"
    code, checks = doctor("--offline", env={**doctor.env, "CLAUDECODE": "1"})
    assert (code, status(checks, "nested")) == (0, "warn")
    assert "CLAUDECODE" in checks["nested"]["detail"]


@pytest.mark.skipif(os.geteuid() != 0, reason="claude's root rule needs root")
def test_claude_as_root_without_is_sandbox_1_fails_the_doctor_and_stops_a_run(
        doctor: Doctor, run_aidd: RunAidd, fake_agent: FakeAgent) -> None:
    code, checks = doctor("--cli", "claude-code", "--offline")
    assert (code, status(checks, "root")) == (0, "ok")  # the fixture sets IS_SANDBOX=1
    env = {**doctor.env, "IS_SANDBOX": "yes"}
    code, checks = doctor("--cli", "claude-code", env=env)
    assert (code, status(checks, "root")) == (8, "fail")
    assert status(checks, "auth") == "skip"  # no prompt for a CLI that cannot start
    before = tree_snapshot(doctor.project)
    res = run_aidd("--project-dir", str(doctor.project), "--cli", "claude-code", "--prompt",
                   "x", "--max-iterations", "1", *LIMITS, env=env)
    assert res.code == 8
    assert "IS_SANDBOX=yes" in res.err
    assert "fix: set IS_SANDBOX=1" in res.err
    assert fake_agent.records() == []
    assert tree_snapshot(doctor.project) == before


def test_disk_space_is_reported(doctor: Doctor) -> None:
    # The thresholds (warn under 1 GiB, fail under 100 MiB) are tests/unit/doctor/test_place.
    checks = doctor.checks("--offline")
    assert status(checks, "disk") == "ok"
    assert " free in " + str(doctor.project) in checks["disk"]["detail"]


# -- git ----------------------------------------------------------------------------------------
def test_git_outside_a_repository_and_inside_one(doctor: Doctor) -> None:
    checks = doctor.checks("--offline")
    assert "private repository" in checks["repository"]["detail"]
    assert status(checks, "checkpoints") == "ok"
    git(doctor.project, "init", "-q", "-b", "main")
    checks = doctor.checks("--offline")
    assert "on branch main, 1 changed or untracked paths" in checks["repository"]["detail"]
    checks = doctor.checks("--offline", "--no-checkpoints")
    assert status(checks, "checkpoints") == "skip"


def test_a_merge_in_progress_warns(doctor: Doctor) -> None:
    git(doctor.project, "init", "-q")
    git(doctor.project, "add", "-A")
    git(doctor.project, "commit", "-qm", "one")
    head = git(doctor.project, "rev-parse", "HEAD").strip()
    (doctor.project / ".git" / "MERGE_HEAD").write_text(head + "\n")
    code, checks = doctor("--offline")
    assert (code, status(checks, "repository")) == (0, "warn")
    assert "a merge is in progress" in checks["repository"]["detail"]


def test_git_missing_warns_that_no_checkpoint_is_recorded(doctor: Doctor, tmp_path: Path,
                                                          fake_agent: FakeAgent) -> None:
    bin_dir = tmp_path / "nogit-bin"
    bin_dir.mkdir()
    for tool in ("dirname",):  # what the fake CLIs' wrappers need
        os.symlink(f"/usr/bin/{tool}", bin_dir / tool)
    env = {**doctor.env, "PATH": f"{fake_agent.bin_dir}{os.pathsep}{bin_dir}"}
    code, checks = doctor("--offline", env=env)
    assert (code, status(checks, "git"), status(checks, "checkpoints")) == (0, "warn", "warn")


# -- the project ----------------------------------------------------------------------------------
def test_project_dir_missing_is_created_by_a_run_a_file_fails_with_2(doctor: Doctor) -> None:
    code, checks = doctor("--offline", "--project-dir", str(doctor.project / "new" / "app"))
    assert status(checks, "project") == "ok"
    assert "a run creates it" in checks["project"]["detail"]
    assert status(checks, "spec") == "warn"  # new: the first run needs --spec
    assert not (doctor.project / "new").exists()
    code, checks = doctor("--offline", "--project-dir", str(doctor.project / "README.md"))
    assert (code, status(checks, "project")) == (2, "fail")


def test_spec_missing_fails_with_3(doctor: Doctor) -> None:
    spec = doctor.project.parent / "spec.md"
    spec.write_text("# spec\n")
    code, checks = doctor("--offline", "--spec", str(spec))
    assert (code, status(checks, "spec")) == (0, "ok")
    code, checks = doctor("--offline", "--spec", str(spec) + ".missing")
    assert (code, status(checks, "spec")) == (3, "fail")


def test_planted_links_warn_or_fail_with_3(doctor: Doctor, tmp_path: Path) -> None:
    plant(doctor.project / ".automaker" / "features" / "a" / "feature.json", "fifo")
    code, checks = doctor("--offline")
    assert (code, status(checks, "links")) == (0, "warn")
    assert "features/a/feature.json" in checks["links"]["detail"]
    outside = tmp_path / "outside"
    outside.mkdir()
    plant(doctor.project / ".automaker" / "iterations", "symlink", outside)
    code, checks = doctor("--offline")
    assert (code, status(checks, "links")) == (3, "fail")


def test_lock_free_or_held_by_whom(doctor: Doctor) -> None:
    code, checks = doctor("--offline")
    assert checks["lock"]["detail"] == "free (no lock file)"
    lock = doctor.project / ".automaker" / "aidd.lock"
    lock.parent.mkdir()
    lock.write_text(json.dumps({"pid": os.getpid(), "started_at": "2026-11-26T01:00:00",
                                "host": os.uname().nodename}) + "\n")
    with lock.open() as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        code, checks = doctor("--offline")
    assert (code, status(checks, "lock")) == (0, "warn")
    assert f"held by aidd pid {os.getpid()}, started 2026-11-26T01:00:00" in (
        checks["lock"]["detail"])


# -- configuration ------------------------------------------------------------------------------
def test_every_config_layer_is_judged_and_a_broken_one_fails_with_2(
        doctor: Doctor, run_aidd: RunAidd) -> None:
    code, checks = doctor("--offline")
    assert [status(checks, n) for n in ("user config", "project config", "variables")] == [
        "ok"] * 3
    user = Path(doctor.env["XDG_CONFIG_HOME"]) / "aidd" / "config.yaml"
    user.parent.mkdir(parents=True)
    user.write_text("idle-timeout: [1\n")
    (doctor.project / ".automaker").mkdir()
    (doctor.project / ".automaker" / "aidd.yaml").write_text("no-such-key: 1\n")
    env = {**doctor.env, "AIDD_TIMEOUT": "soon"}
    code, checks = doctor("--offline", env=env)
    assert code == 2
    assert "not valid YAML" in checks["user config"]["detail"]
    assert "unknown key 'no-such-key'" in checks["project config"]["detail"]
    assert "AIDD_TIMEOUT" in checks["variables"]["detail"]
    assert status(checks, "lock") == "ok"  # the other checks still ran
    res = run_aidd("--status", "--project-dir", str(doctor.project), env=env)
    assert res.code == 2  # outside the doctor a broken layer stops aidd at once, as before


def test_copy_list_problems_warn(doctor: Doctor) -> None:
    code, checks = doctor("--offline")
    assert status(checks, "copy lists") == "ok"
    home = Path(doctor.env["AIDD_HOME"])
    home.mkdir()
    (home / "copyfiles.txt").write_text("/no/such/file.txt\n")
    code, checks = doctor("--offline")
    assert (code, status(checks, "copy lists")) == (0, "warn")
    assert "copyfiles.txt:1: source /no/such/file.txt does not exist" in (
        checks["copy lists"]["detail"])


def test_gate_program_missing_fails_with_2_and_a_run_shows_it(
        doctor: Doctor, run_aidd: RunAidd, fake_agent: FakeAgent) -> None:
    code, checks = doctor("--offline", "--gate", "true", "--gate", "sh -c 'exit 0'")
    assert (code, status(checks, "gate")) == (0, "ok")
    code, checks = doctor("--offline", "--gate", "no-such-checker-xyz --all")
    assert (code, status(checks, "gate")) == (2, "fail")
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(doctor.project), "--prompt", "x", "--max-iterations",
                   "1", "--gate", "no-such-checker-xyz --all", "--no-checkpoints", *LIMITS,
                   env={**doctor.env, "CLAUDECODE": "1"})
    assert "doctor: fail gate: program not found for no-such-checker-xyz" in res.out
    assert "doctor: warn nested: CLAUDECODE set" in res.out
    assert "doctor: ok" not in res.out  # ok lines are not shown by a run
    assert res.out.index("doctor: fail gate") < res.out.index("001.log")


# -- endpoints ----------------------------------------------------------------------------------
def test_endpoints_reachable_or_not_without_showing_secrets(doctor: Doctor) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    with recorder() as server:
        code, checks = doctor("--offline", "--heartbeat-url", f"{server.url}/{SECRET}")
        assert status(checks, "heartbeat") == "skip"
        assert server.requests == []
        code, checks = doctor("--heartbeat-url", f"{server.url}/{SECRET}",
                              "--notify-webhook", f"http://127.0.0.1:{closed}/{SECRET}")
    assert [r.method for r in server.requests] == ["HEAD"]
    assert status(checks, "heartbeat") == "ok"
    assert (code, status(checks, "notify webhook")) == (2, "fail")
    assert SECRET not in json.dumps(checks)


def test_the_cli_decides_the_exit_code_over_config_and_files(doctor: Doctor) -> None:
    env = {**doctor.env, "PATH": "/usr/bin:/bin", "AIDD_TIMEOUT": "soon"}
    code, checks = doctor("--offline", "--spec", "/no/spec.md", env=env)
    assert [status(checks, n) for n in ("cli", "variables", "spec")] == ["fail"] * 3
    assert code == 8


def test_a_run_without_the_cli_still_exits_8_before_writing(
        run_aidd: RunAidd, env: dict[str, str], project: Path) -> None:
    before = tree_snapshot(project)
    res = run_aidd("--project-dir", str(project), "--prompt", "x", *LIMITS,
                   env={**env, "PATH": "/usr/bin:/bin"})
    assert res.code == 8
    assert "not found on PATH" in res.err
    assert tree_snapshot(project) == before
