"""The doctor's text (one line per check, the fix under warnings and failures, a summary) and
its JSON document."""

from __future__ import annotations

import json
from pathlib import Path

from aidd.config import Actions, load_settings
from aidd.doctor.findings import fail, ok, skip, warn
from aidd.doctor.show import as_json, as_text
from aidd.errors import ExitCode

FINDINGS = [ok("cli", "opencode 1.18.33"), warn("disk", "only 512 MiB free", "free some"),
            fail("auth", "refused", "log in", ExitCode.CLI_ERROR), skip("gate", "none")]


def test_text_one_line_per_check_fixes_below_and_a_summary(tmp_path: Path) -> None:
    settings = load_settings({"project-dir": tmp_path}, Actions(doctor=True), {}, cwd=tmp_path)
    lines = as_text(settings, FINDINGS).splitlines()
    assert lines[0].startswith("aidd ")
    assert lines[1] == "ok    cli             opencode 1.18.33"
    assert lines[2] == "warn  disk            only 512 MiB free"
    assert lines[3] == "                      fix: free some"
    assert lines[4] == "fail  auth            refused"
    assert lines[5] == "                      fix: log in"
    assert lines[6] == "skip  gate            none"
    assert lines[7] == "doctor: 1 ok, 1 warning, 1 failure, 1 skipped; exit 8"


def test_json_document(tmp_path: Path) -> None:
    settings = load_settings({"project-dir": tmp_path}, Actions(doctor=True, json=True), {},
                             cwd=tmp_path)
    doc = json.loads(json.dumps(as_json(settings, FINDINGS)))
    assert doc["exit_code"] == 8
    assert doc["summary"] == {"ok": 1, "warn": 1, "fail": 1, "skip": 1}
    assert doc["checks"][2] == {"name": "auth", "status": "fail", "detail": "refused",
                                "fix": "log in", "exit_code": 8}
    assert doc["checks"][0]["fix"] is None
    assert doc["checks"][0]["exit_code"] is None
