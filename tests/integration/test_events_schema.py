"""events.jsonl against the schema published in docs/events.md (LOG-40..43, AC-84).

The schema is parsed from the doc's JSON block. Three checks keep doc and code together:
every `emit(...)` call in aidd/ names a documented event with exactly its documented fields;
every documented event has a section whose field table matches the block; and every line of
real runs (covering nearly every event) validates against the block.
"""

from __future__ import annotations

import ast
import json
import re
import signal
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.conftest import FakeAgent
from tests.integration.runs import LIMITS, OK, REPO, RunAidd, complete_project, started
from tests.waiting import wait_for

DOC = REPO / "docs" / "events.md"
UTC_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
RUN_ID = re.compile(r"^\d{8}T\d{6}Z-\d+$")
# Events each run below must produce; together they cover the schema but for NOT_RUN.
COVERED: dict[str, set[str]] = {
    "nudge_kill_children": {"run_start", "phase_start", "iteration_start", "nudge", "kill",
                            "iteration_end", "children_reaped", "phase_end", "run_end",
                            "checkpoint"},
    "rate_limit_stop": {"warning", "rate_limit_sleep", "stop_requested", "stop", "run_end"},
    "completion_audits_remediation": {"completion", "audit_findings", "remediation_cycle",
                                      "remediation_cap", "phase_end"},
    "completion_confirmed": {"completion", "run_end"},
    "gate": {"gate_baseline", "gate", "gate_passes", "completion"},
    "stuck": {"stuck", "phase_end"},
    "mode_done": {"mode_done", "phase_end"},
    "quit_on_abort": {"failure_threshold", "run_end"},
    "restart": {"previous_run", "run_end"},
    "signal": {"signal", "kill", "run_end"},
    "budget_and_pace": {"pace", "budget_exhausted", "run_end"},
}
NOT_RUN: set[str] = {"rollback",  # a one-shot: test_checkpoints_rollback.py checks it
                     "feature_restored",  # test_automaker_project.py validates it
                     "feature_set_aside",  # test_circular_fixes.py validates it
                     # --parallel N: test_parallel.py validates them
                     "worktrees_cleaned", "slot_start", "merge",
                     "notify_failed",  # needs an HTTP endpoint: test_notifications.py
                     "liveness",  # a state of 5 s and more: test_liveness.py checks it
                     "checkpoint_failed"}  # needs git gone: tests/unit/run/test_checkpoints.py


def schema() -> dict[str, Any]:
    blocks = re.findall(r"^```json\n(.*?)^```$", DOC.read_text(), re.S | re.M)
    assert len(blocks) == 1, "docs/events.md must hold exactly one ```json block"
    parsed: dict[str, Any] = json.loads(blocks[0])
    return parsed


# -- the validator of the doc's type notation --------------------------------------------------
def check(value: Any, spec: Any, where: str) -> list[str]:
    if isinstance(spec, dict):
        return _check_object(value, spec, where)
    if isinstance(spec, list):
        if not isinstance(value, list):
            return [f"{where}: expected a list, got {value!r}"]
        return [e for i, item in enumerate(value) for e in check(item, spec[0], f"{where}[{i}]")]
    nullable = spec.endswith("?")
    if value is None:
        return [] if nullable else [f"{where}: null but not nullable"]
    if _scalar_ok(value, spec.removesuffix("?")):
        return []
    return [f"{where}: {value!r} is not {spec}"]


def _check_object(value: Any, spec: dict[str, Any], where: str) -> list[str]:
    if value is None and spec.get("?") is True:
        return []
    if not isinstance(value, dict):
        return [f"{where}: expected an object, got {value!r}"]
    # A name ending in "?" is a key that may be absent (docs/report.md: `--parallel N`'s).
    specs = {k.removesuffix("?"): v for k, v in spec.items() if k != "?"}
    needed = {k for k in spec if k != "?" and not k.endswith("?")}
    errors = [f"{where}: missing {k}" for k in sorted(needed - set(value))]
    errors += [f"{where}: undocumented {k}" for k in sorted(set(value) - set(specs))]
    for key in sorted(set(specs) & set(value)):
        errors += check(value[key], specs[key], f"{where}.{key}")
    return errors


def _scalar_ok(value: Any, kind: str) -> bool:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind.startswith("enum:"):
        return value in kind.removeprefix("enum:").split("|")
    if kind == "map:integer":
        return isinstance(value, dict) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value.values())
    if kind == "timestamp":
        return isinstance(value, str) and _has_zone(value)
    return {
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": number,
        "boolean": isinstance(value, bool),
        "utc_ms": isinstance(value, str) and bool(UTC_MS.match(value)),
        "run_id": isinstance(value, str) and bool(RUN_ID.match(value)),
        "object": isinstance(value, dict),
    }[kind]


def _has_zone(text: str) -> bool:
    try:
        return datetime.fromisoformat(text).tzinfo is not None
    except ValueError:
        return False


def validate_file(root: Path, after: int = 0) -> list[dict[str, Any]]:
    """Every line (past the first `after`, an earlier run's): complete, one JSON object, valid
    for its event; returns the events."""
    spec = schema()
    raw = (root / ".automaker" / "events.jsonl").read_bytes()
    assert raw.endswith(b"\n")
    records = []
    for number, line in enumerate(raw.split(b"\n")[:-1][after:], after + 1):
        record = json.loads(line)
        assert isinstance(record, dict), line
        name = record.get("event")
        assert name in spec["events"], f"line {number}: undocumented event {name!r}"
        assert record["v"] == spec["version"]
        fields = {**spec["common"], **spec["events"][name]}
        if "slot" in record:  # a --parallel slot's event: both tags, always together
            fields = {**fields, **spec["tags"]}
        errors = check(record, fields, f"line {number} ({name})")
        assert errors == [], errors
        records.append(record)
    assert len({r["run"] for r in records}) == 1
    assert records[0]["event"] == "run_start"
    # run_end is the last line; only a failure of the run's last notifications may follow it
    ended = [r["event"] for r in records if r["event"] != "notify_failed"]
    assert ended[-1] == "run_end"
    last = max(i for i, r in enumerate(records) if r["event"] == "run_end")
    assert {r["trigger"] for r in records[last + 1:]} <= {"run_end", "completed", "heartbeat"}
    return records


def assert_valid(root: Path, scenario: str, after: int = 0) -> list[dict[str, Any]]:
    records = validate_file(root, after)
    seen = {r["event"] for r in records}
    assert COVERED[scenario] <= seen, COVERED[scenario] - seen
    return records


# -- doc and code agree ------------------------------------------------------------------------
def emitted_by_code() -> dict[str, list[set[str]]]:
    """Event name -> the keyword sets of every `*.emit("name", ...)` call in aidd/."""
    found: dict[str, list[set[str]]] = {}
    for path in sorted((REPO / "aidd").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "emit"):
                continue
            assert node.args, f"{path}:{node.lineno}: emit without an event name"
            assert isinstance(node.args[0], ast.Constant), (
                f"{path}:{node.lineno}: the event name must be a literal")
            assert all(k.arg is not None for k in node.keywords), (
                f"{path}:{node.lineno}: fields must be named, not **spread")
            found.setdefault(str(node.args[0].value), []).append(
                {str(k.arg) for k in node.keywords})
    return found


def test_every_emitted_event_and_field_is_documented() -> None:
    events = schema()["events"]
    code = emitted_by_code()
    assert set(code) == set(events)
    for name, calls in code.items():
        for fields in calls:
            assert fields == set(events[name]), name


def test_every_event_has_a_section_listing_its_fields() -> None:
    text = DOC.read_text()
    sections = re.split(r"^### ", text, flags=re.M)[1:]
    documented: dict[str, set[str]] = {}
    for section in sections:
        title, _, body = section.partition("\n")
        body = body.split("\n## ")[0]
        documented[title.strip("` ")] = set(re.findall(r"^\| `(\w+)` \|", body, re.M))
    events = schema()["events"]
    assert set(documented) == set(events)
    for name, fields in events.items():
        assert documented[name] == set(fields), name


def test_the_runs_below_cover_the_schema() -> None:
    covered = set().union(*COVERED.values())
    assert covered | NOT_RUN == set(schema()["events"])


def test_the_validator_rejects_what_the_schema_forbids() -> None:
    fields = {**schema()["common"], **schema()["events"]["stuck"]}
    good = {"v": 1, "ts": "2026-11-21T22:05:01.123Z", "run": "20261121T220501Z-42",
            "event": "stuck", "iterations": [1, 2, 3]}
    assert check(good, fields, "x") == []
    for bad in ({**good, "iterations": ["1"]}, {**good, "ts": "2026-11-21T22:05:01Z"},
                {**good, "extra": 1}, {k: v for k, v in good.items() if k != "iterations"},
                {**good, "run": "today"}):
        assert check(bad, fields, "x") != []


# -- real runs ---------------------------------------------------------------------------------
def test_nudge_kill_and_children(run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent,
                                 project: Path) -> None:
    fake_agent.script([{"init": True}, {"say": "thinking"}, {"sleep": 30}],
                      [{"init": True}, {"spawn": ["sleep", "1000"]}, {"say": "done"},
                       {"result": {}}])
    res = run_aidd("--project-dir", str(project), "--cli", "claude-code", "--max-iterations", "2",
                   "--idle-nudge-timeout", "1", "--idle-timeout", "2", env=env)
    assert res.code == 0, res.out + res.err
    records = assert_valid(project, "nudge_kill_children")
    nudge = next(r for r in records if r["event"] == "nudge")
    assert (nudge["method"], nudge["delivered"]) == ("stdin", True)
    assert next(r for r in records if r["event"] == "kill")["reason"] == "idle"


def test_warning_rate_limit_and_stop(run_aidd: RunAidd, env: dict[str, str],
                                     fake_agent: FakeAgent, project: Path) -> None:
    (project / "opencode.json").write_text("{not json")
    fake_agent.script([{"init": True}, {"error": {"name": "APIError",
                                                  "message": "rate limit exceeded"}}],
                      [{"write_file": ".automaker/.stop", "text": "now"}, {"sleep": 1.5}, *OK])
    res = run_aidd("--project-dir", str(project), "--rate-limit-fallback", "1", *LIMITS, env=env)
    assert res.code == 6, res.out + res.err
    records = assert_valid(project, "rate_limit_stop")
    warning = next(r for r in records if r["event"] == "warning")
    assert warning["file"] == "opencode.json"


def test_completion_post_audit_and_remediation(run_aidd: RunAidd, env: dict[str, str],
                                               fake_agent: FakeAgent, project: Path) -> None:
    """A finding that never gets fixed: pending review, post-completion audit, 10 remediation
    cycles, the cap."""
    complete_project(project)
    finding = {"id": "audit-dead-code-1-other", "category": "Dead code", "description": "x",
               "passes": False, "auditSource": "DEAD_CODE"}
    fake_agent.script([{"write_file": ".automaker/features/audit-dead-code-1-x/feature.json",
                        "text": json.dumps(finding)}, *OK])
    res = run_aidd("--project-dir", str(project), "--audit-on-completion", "DEAD_CODE",
                   "--code-after-audit", "--max-iterations", "1", *LIMITS, env=env, timeout=120)
    assert res.code == 0, res.out + res.err
    records = assert_valid(project, "completion_audits_remediation")
    phases = {r["phase"] for r in records if r["event"] == "phase_start"}
    assert phases == {"main", "post_completion_audit", "remediation", "audit"}
    findings = next(r for r in records if r["event"] == "audit_findings")
    assert findings["invalid"]
    assert findings["invalid"][0]["errors"]


def test_completion_confirmed(run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent,
                              project: Path) -> None:
    complete_project(project)
    fake_agent.script(OK)
    res = run_aidd("--project-dir", str(project), *LIMITS, env=env)
    assert res.code == 73, res.out + res.err
    records = assert_valid(project, "completion_confirmed")
    states = [r["state"] for r in records if r["event"] == "completion"]
    assert states == ["pending", "confirmed"]


def test_gate(run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent,
              project: Path) -> None:
    """A check red at the baseline, broken anew by the agent, who passes a feature meanwhile."""
    complete_project(project)
    feature = project / ".automaker" / "features" / "feature-1-a" / "feature.json"
    data = json.loads(feature.read_text()) | {"passes": False, "status": "in_progress"}
    feature.write_text(json.dumps(data))
    (project / "ok").write_text("")
    data.update(passes=True, status="verified")  # done: the status decides (issue 31)
    fake_agent.script([{"write_file": str(feature.relative_to(project)),
                        "text": json.dumps(data)}, {"write_file": "new", "text": ""}, *OK])
    res = run_aidd("--project-dir", str(project), "--gate", "test ! -e new", "--gate", "false",
                   "--max-iterations", "2", *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    records = assert_valid(project, "gate")
    assert [r["state"] for r in records if r["event"] == "completion"] == ["held"]


def test_stuck(run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent,
               project: Path) -> None:
    fake_agent.script(OK, OK, OK, [{"write_file": ".automaker/.stop"}])
    res = run_aidd("--project-dir", str(project), *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    assert_valid(project, "stuck")


def test_mode_done(run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent,
                   project: Path) -> None:
    (project / ".automaker").mkdir()
    (project / ".automaker" / "todo.md").write_text("- [ ] one thing\n")
    fake_agent.script([{"write_file": ".automaker/todo.md", "text": "- [x] one thing\n"}, *OK])
    res = run_aidd("--project-dir", str(project), "--todo", *LIMITS, env=env)
    assert res.code == 0, res.out + res.err
    assert_valid(project, "mode_done")


def test_quit_on_abort(run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent,
                       project: Path) -> None:
    fake_agent.script([{"say": "broken"}, {"exit": 5}])
    res = run_aidd("--project-dir", str(project), "--quit-on-abort", "1", *LIMITS, env=env)
    assert res.code == 5, res.out + res.err
    assert_valid(project, "quit_on_abort")


def test_restart(run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent,
                 project: Path) -> None:
    """A second run says how the first ended (issue 32)."""
    fake_agent.script([{"say": "broken"}, {"exit": 5}], [{"say": "broken"}, {"exit": 5}])
    for _ in range(2):
        before = (project / ".automaker" / "events.jsonl").read_bytes().count(b"\n") if (
            project / ".automaker" / "events.jsonl").exists() else 0
        res = run_aidd("--project-dir", str(project), "--quit-on-abort", "1", *LIMITS, env=env)
        assert res.code == 5, res.out + res.err
    records = assert_valid(project, "restart", before)
    (previous,) = [r for r in records if r["event"] == "previous_run"]
    assert (previous["ending"], previous["reason"], previous["cut_short"]) == (
        "ended", "quit_on_abort", False)


def test_signal(env: dict[str, str], fake_agent: FakeAgent, project: Path,
                tmp_path: Path) -> None:
    fake_agent.script([{"say": "working"}, {"sleep": 60}])
    record = fake_agent.record_dir / "inv-000.json"
    with started(env, tmp_path, "--project-dir", str(project), *LIMITS) as proc:
        wait_for(record.exists, what="the agent to start")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 124
    records = assert_valid(project, "signal")
    assert next(r for r in records if r["event"] == "signal")["name"] == "SIGTERM"
    assert records[-1]["reason"] == "signal"


def test_budget_and_pace(run_aidd: RunAidd, env: dict[str, str], fake_agent: FakeAgent,
                         project: Path) -> None:
    """A quota window at 90% pauses the run until it resets; the second attempt's tokens
    exhaust --max-tokens."""
    limit = {"type": "rate_limit_event", "rate_limit_info": {
        # 10 s: the window must not have reset before the attempt ends (3 s of set-up seen on
        # a loaded machine), and the run pauses until it does
        "status": "allowed_warning", "resetsAt": int(time.time()) + 10,
        "rateLimitType": "five_hour", "utilization": 0.9}}
    fake_agent.script([{"init": True}, {"json": limit}, {"say": "done"}, {"result": {}}],
                      [{"init": True}, {"say": "done"}, {"result": {}}])
    res = run_aidd("--project-dir", str(project), "--cli", "claude-code", "--pace-at", "80",
                   "--rate-limit-buffer", "0", "--max-tokens", "300", "--max-iterations", "5",
                   *LIMITS, env=env)
    assert res.code == 9, res.out + res.err
    records = assert_valid(project, "budget_and_pace")
    assert records[-1]["reason"] == "budget"
