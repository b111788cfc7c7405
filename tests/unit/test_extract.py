"""Structured extraction (LOG-30..33, AC-83)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aidd.errors import NotFoundError
from aidd.logs import extract
from aidd.logs.cleaning import clean_log
from aidd.logs.extract import extract_batch, extract_log, write_extraction
from aidd.project.paths import ProjectPaths
from tests.featurefiles import write
from tests.planted import plant, within

LOG32_KEYS = {
    "version", "iterationNumber", "featureSlug", "featureDescription", "cli", "promptType",
    "timestamps", "toolCalls", "filesModified", "filesRead", "filesCreated", "commands",
    "outcome", "errors", "summary", "tokens", "costUsd",
}  # fmt: skip
SUMMARY_KEYS = {
    "totalToolCalls", "uniqueFilesModified", "uniqueFilesRead", "bashCommandsRun",
    "hasLintErrors", "hasTypeErrors", "hasBuildErrors",
}  # fmt: skip


def _j(obj: dict[str, Any]) -> str:
    return json.dumps(obj)


def _header(
    cli: str, number: int = 7, kind: str = "coding", project: Path | None = None
) -> list[str]:
    lines = [
        "[aidd] aidd 0.1.0",
        f"[aidd] Iteration 3 of 10 (log {number:03d})",
        "[aidd] Phase: main",
        f"[aidd] Prompt: {kind} (onboarding complete)",
        f"[aidd] CLI: {cli} 1.2.3 (/usr/bin/{cli})",
    ]
    if project is not None:
        lines.append(f"[aidd] Project: {project}")
    lines.append("[aidd] Started: 2026-01-02T03:04:05+01:00")
    lines.append(f"[aidd 03:04:05] Sending {kind} prompt to {cli} (1234 bytes)")
    return lines


def _trailer(name: str, result: int, outcome: str, reason: str) -> list[str]:
    return [
        f"[aidd] {name} finished: result {result} ({outcome}, {reason}) after 1m 5s",
        "[aidd] --- end of iteration 3 (attempt 007) ---",
        "[aidd] Finished: 2026-01-02T03:05:10+01:00",
    ]


def _project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    iterations = root / ".automaker" / "iterations"
    iterations.mkdir(parents=True)
    write(ProjectPaths(root), "feature-1-login",
          {"id": "feature-1-login", "description": "Log in with email"})
    return root, iterations


def _claude_log(root: Path) -> list[str]:
    feature = f"{root}/.automaker/features/feature-1-login/feature.json"

    def use(tid: str, name: str, tool_input: dict[str, Any]) -> str:
        block = {"type": "tool_use", "id": tid, "name": name, "input": tool_input}
        usage = {"input_tokens": 1, "output_tokens": 1}
        return _j(
            {
                "type": "assistant",
                "session_id": "s",
                "message": {"id": f"m-{tid}", "content": [block], "usage": usage},
            }
        )

    def result(tid: str, content: Any, is_error: bool = False) -> str:
        block = {
            "type": "tool_result",
            "tool_use_id": tid,
            "content": content,
            "is_error": is_error,
        }
        return _j({"type": "user", "session_id": "s", "message": {"content": [block]}})

    return [
        *_header("claude-code", project=root),
        _j({"type": "system", "subtype": "init", "session_id": "s", "model": "m"}),
        "» start · model m · conversation s…",
        use("t1", "Read", {"file_path": f"{root}/src/app.ts"}),
        result("t1", "file text"),
        use("t2", "Edit", {"file_path": feature, "old_string": "a", "new_string": "b"}),
        result("t2", [{"type": "text", "text": "ok"}]),
        use("t3", "Write", {"file_path": f"{root}/src/new.ts", "content": "x"}),
        use("t4", "Bash", {"command": "npx tsc --noEmit"}),
        result("t4", "Exit code 2\nsrc/app.ts(1,1): error TS2345: bad type", is_error=True),
        use("t5", "Bash", {"command": "ls"}),
        result("t5", "a b"),
        use("t6", "Grep", {"pattern": "TODO"}),
        use("t7", "Edit", {"file_path": f"{root}/src/app.ts"}),
        _j(
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "duration_ms": 65000,
                "session_id": "s",
                "total_cost_usd": 0.25,
                "usage": {
                    "input_tokens": 100,
                    "output_tokens": 50,
                    "cache_read_input_tokens": 7,
                    "cache_creation_input_tokens": 3,
                },
            }
        ),
        *_trailer("Claude Code", 0, "success", "exit_status"),
    ]


def _write_log(path: Path, lines: list[str], crlf: bool = False) -> Path:
    sep = "\r\n" if crlf else "\n"
    path.write_text(sep.join(lines) + sep)
    return path


def test_claude_log(tmp_path: Path) -> None:
    root, iterations = _project(tmp_path)
    log = _write_log(iterations / "007.log", _claude_log(root), crlf=True)
    data = extract_log(log)
    assert set(data) == LOG32_KEYS
    assert data["version"] == "1.0"
    assert data["iterationNumber"] == 7
    assert data["cli"] == {"type": "claude-code", "name": "Claude Code"}
    assert data["promptType"] == "coding"
    assert data["featureSlug"] == "feature-1-login"
    assert data["featureDescription"] == "Log in with email"
    assert data["timestamps"] == {
        "start": "2026-01-02T03:04:05+01:00",
        "end": "2026-01-02T03:05:10+01:00",
        "durationSeconds": 65.0,
    }
    assert [c["tool"] for c in data["toolCalls"]] == [
        "Read",
        "Edit",
        "Write",
        "Bash",
        "Bash",
        "Grep",
        "Edit",
    ]
    assert data["toolCalls"][0] == {"tool": "Read", "target": "src/app.ts", "lineNumber": 11}
    assert data["filesRead"] == ["src/app.ts"]
    assert data["filesModified"] == [
        ".automaker/features/feature-1-login/feature.json",
        "src/app.ts",
    ]
    assert data["filesCreated"] == ["src/new.ts"]
    assert [(c["command"], c["exitCode"]) for c in data["commands"]] == [
        ("npx tsc --noEmit", 2),
        ("ls", 0),
    ]
    assert data["outcome"] == {"status": "success", "exitCode": 0, "failureCount": 0}
    [error] = data["errors"]
    assert error["type"] == "typescript"
    assert error["message"].startswith("Exit code 2")
    assert data["summary"] == {
        "totalToolCalls": 7,
        "uniqueFilesModified": 3,
        "uniqueFilesRead": 1,
        "bashCommandsRun": 2,
        "hasLintErrors": False,
        "hasTypeErrors": True,
        "hasBuildErrors": False,
    }
    assert data["tokens"] == {
        "input": 100,
        "output": 50,
        "reasoning": 0,
        "cacheRead": 7,
        "cacheWrite": 3,
    }
    assert data["costUsd"] == 0.25


def _opencode_log(root: Path) -> list[str]:
    def tool(
        call: str,
        name: str,
        tool_input: dict[str, Any],
        status: str = "completed",
        output: str = "",
        exit_code: int | None = None,
        ts: int = 1_700_000_000_000,
    ) -> str:
        state: dict[str, Any] = {"status": status, "input": tool_input, "output": output}
        if exit_code is not None:
            state["metadata"] = {"exit": exit_code}
        return _j(
            {
                "type": "tool_use",
                "timestamp": ts,
                "sessionID": "ses_1",
                "part": {"type": "tool", "tool": name, "callID": call, "state": state},
            }
        )

    def step(tokens: dict[str, Any], cost: float) -> str:
        return _j(
            {
                "type": "step_finish",
                "timestamp": 1_700_000_030_000,
                "sessionID": "ses_1",
                "part": {"type": "step-finish", "reason": "stop", "tokens": tokens, "cost": cost},
            }
        )

    return [
        *_header("opencode", number=12, kind="initializer"),
        "opencode v1.2.3 banner",
        tool(
            "c1",
            "write",
            {
                "filePath": f"{root}/.automaker/features/feature-2-x/feature.json",
                "content": json.dumps({"description": "From the write"}),
            },
        ),
        tool(
            "c2", "bash", {"command": "npm run lint"}, output="2 problems (2 errors)", exit_code=1
        ),
        tool(
            "c3",
            "bash",
            {"command": "npm run build"},
            status="error",
            output="Build failed: cannot find module 'x'",
        ),
        tool("c4", "read", {"filePath": "/elsewhere/notes.md"}),
        step({"input": 10, "output": 5, "reasoning": 2, "cache": {"read": 4, "write": 1}}, 0.01),
        step({"input": 20, "output": 5, "reasoning": 0, "cache": {"read": 0, "write": 0}}, 0.02),
        _j(
            {
                "type": "error",
                "timestamp": 1_700_000_040_000,
                "sessionID": "ses_1",
                "error": {"name": "APIError", "data": {"message": "permission denied for bash"}},
            }
        ),
        *_trailer("OpenCode", 71, "failure", "idle_timeout"),
        "[aidd 03:05:11] ERROR 3 consecutive failures (--quit-on-abort 3); exiting with 71",
    ]


def test_opencode_log(tmp_path: Path) -> None:
    root, iterations = _project(tmp_path)
    log = _write_log(iterations / "012.log", _opencode_log(root))
    data = extract_log(log)
    assert set(data) == LOG32_KEYS
    assert data["iterationNumber"] == 12
    assert data["cli"] == {"type": "opencode", "name": "OpenCode"}
    assert data["promptType"] == "initializer"
    assert data["featureSlug"] == "feature-2-x"
    assert data["featureDescription"] == "From the write"
    assert data["filesCreated"] == [".automaker/features/feature-2-x/feature.json"]
    assert data["filesRead"] == ["/elsewhere/notes.md"]
    assert [(c["command"], c["exitCode"]) for c in data["commands"]] == [
        ("npm run lint", 1),
        ("npm run build", None),
    ]
    assert data["outcome"] == {"status": "idle_timeout", "exitCode": 71, "failureCount": 3}
    types = [e["type"] for e in data["errors"]]
    assert types == ["lint", "build", "permission", "timeout", "general"]
    assert data["summary"]["hasLintErrors"]
    assert data["summary"]["hasBuildErrors"]
    assert data["tokens"] == {
        "input": 30,
        "output": 10,
        "reasoning": 2,
        "cacheRead": 4,
        "cacheWrite": 1,
    }
    assert data["costUsd"] == pytest.approx(0.03)


def test_cleaned_log_gives_the_same_record(tmp_path: Path) -> None:
    root, iterations = _project(tmp_path)
    log = _write_log(iterations / "007.log", _claude_log(root), crlf=True)
    raw = extract_log(log)
    assert clean_log(log) is None
    assert extract_log(log) == raw


@pytest.mark.parametrize(
    ("trailer", "status", "code"),
    [
        ("result 0 (success, exit_status)", "success", 0),
        ("result 1 (success, exit1_success)", "success", 1),
        ("result 1 (failure, exit_status)", "failure", 1),
        ("result 124 (failure, wall_timeout)", "timeout", 124),
        ("result 71 (failure, idle_timeout)", "idle_timeout", 71),
        ("result 70 (failure, no_assistant)", "no_assistant", 70),
        ("result 72 (failure, provider_error)", "provider_error", 72),
        ("result 74 (rate_limited, rate_limited)", "rate_limited", 74),
        ("result 75 (failure, no_work)", "no_work", 75),
        ("result 75", "no_work", 75),
        ("result 76 (failure, context_exhausted)", "context_exhausted", 76),
        ("result 76", "context_exhausted", 76),
        ("result 8 (fatal, fatal)", "fatal", 8),
        ("result 137 (failure, signal)", "failure", 137),
        ("result 124", "timeout", 124),
        ("result 0", "success", 0),
    ],
)
def test_outcome_mapping(tmp_path: Path, trailer: str, status: str, code: int) -> None:
    log = _write_log(tmp_path / "001.log", [f"[aidd] Kilo Code finished: {trailer} after 5s"])
    data = extract_log(log)
    assert data["outcome"]["status"] == status
    assert data["outcome"]["exitCode"] == code
    assert data["cli"] == {"type": "kilocode", "name": "Kilo Code"}
    assert data["timestamps"]["durationSeconds"] == 5.0


def test_minimal_log_uses_fallbacks(tmp_path: Path) -> None:
    log = _write_log(tmp_path / "042.ratelimited.log", ["some text", "nothing structured"])
    data = extract_log(log)
    assert set(data) == LOG32_KEYS
    assert data["iterationNumber"] == 42
    assert data["cli"] is None
    assert data["promptType"] is None
    assert data["featureSlug"] is None
    assert data["featureDescription"] is None
    assert data["outcome"] == {"status": "rate_limited", "exitCode": None, "failureCount": 0}
    assert data["tokens"] is None
    assert data["costUsd"] is None
    assert data["toolCalls"] == []
    assert data["errors"] == []
    assert set(data["summary"]) == SUMMARY_KEYS


def test_text_fallback_for_non_json_lines(tmp_path: Path) -> None:
    lines = [
        "\x1b[1m|  Read     src/a.ts\x1b[0m",
        "| Bash | not a tool line |",
        "|  Edit     .automaker/features/f-9/feature.json",
        "npm ERR! Build failed",
        "Error: EACCES: permission denied, open '/x'",
        '{"not": "an event we know"}',
        "{broken json",
        "» error: rendered lines are skipped",
    ]
    data = extract_log(_write_log(tmp_path / "003.log", lines))
    assert [(c["tool"], c["target"]) for c in data["toolCalls"]] == [
        ("Read", "src/a.ts"),
        ("Edit", ".automaker/features/f-9/feature.json"),
    ]
    assert data["featureSlug"] == "f-9"
    assert [e["type"] for e in data["errors"]] == ["build", "permission"]


def test_feature_mentioned_only(tmp_path: Path) -> None:
    _root, iterations = _project(tmp_path)
    lines = [
        _j(
            {
                "type": "assistant",
                "session_id": "s",
                "message": {
                    "content": [
                        {
                            "type": "text",
                            "text": "see .automaker/features/feature-1-login/feature.json",
                        }
                    ]
                },
            }
        )
    ]
    data = extract_log(_write_log(iterations / "001.log", lines))
    assert data["featureSlug"] == "feature-1-login"
    assert data["featureDescription"] == "Log in with email"
    assert data["cli"] == {"type": "claude-code", "name": "Claude Code"}


def test_write_extraction_and_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, iterations = _project(tmp_path)
    log = _write_log(iterations / "007.log", _claude_log(root))
    assert write_extraction(log) is None
    written = json.loads((iterations / "007.json").read_text())
    assert set(written) == LOG32_KEYS
    assert write_extraction(iterations / "404.log") is not None

    def boom(*_: object, **__: object) -> None:
        raise OSError("read-only file system")

    monkeypatch.setattr(extract, "write_atomic", boom)
    assert write_extraction(log) == "could not extract 007.log: read-only file system"


def test_extract_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, iterations = _project(tmp_path)
    _write_log(iterations / "001.log", _claude_log(root))
    _write_log(iterations / "002.ratelimited.log", ["x"])
    (iterations / "001.prompt.md").write_text("prompt")
    assert extract_batch(iterations) == 0
    assert sorted(p.name for p in iterations.glob("*.json")) == ["001.json", "002.ratelimited.json"]
    reported: list[str] = []
    monkeypatch.setattr(extract, "write_atomic", lambda *a, **k: (_ for _ in ()).throw(OSError()))
    assert extract_batch(iterations, reported.append) == 1
    assert len(reported) == 2
    with pytest.raises(NotFoundError):
        extract_batch(tmp_path / "missing")


def test_failure_count_argument_wins(tmp_path: Path) -> None:
    log = _write_log(tmp_path / "001.log", ["[aidd] X finished: result 1 (failure, exit_status)"])
    assert extract_log(log)["outcome"]["failureCount"] == 1
    assert extract_log(log, failure_count=4)["outcome"]["failureCount"] == 4


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_a_log_the_agent_swapped_for_a_fifo_or_a_link_out_is_a_warning_at_once(
        tmp_path: Path, kind: str) -> None:
    """The run's end extracts the log it wrote, which the agent may have replaced (issue 27
    item 15): a FIFO is never waited on, a link out of the project never read."""
    outside = tmp_path / "outside.log"
    _write_log(outside, _claude_log(tmp_path))
    _, iterations = _project(tmp_path / "project")
    log = plant(iterations / "007.log", kind, outside)
    warning = within(5, lambda: write_extraction(log), log)
    assert warning is not None
    assert warning.startswith("could not extract 007.log: ")
    assert not (iterations / "007.json").exists()


def test_forged_numbers_make_no_nan_and_no_failed_extraction(tmp_path: Path) -> None:
    """NNN.json is strict JSON and still written when the agent's output holds NaN, Infinity
    or a timestamp no date holds (issue 27)."""
    _, iterations = _project(tmp_path)
    lines = [
        _j({"type": "step_finish", "sessionID": "ses_1", "timestamp": 10**30,
            "part": {"type": "step-finish", "cost": 0.25, "tokens": {"input": 5}}}),
        _j({"type": "step_finish", "sessionID": "ses_1", "timestamp": 1_795_000_000_000,
            "part": {"type": "step-finish", "cost": float("nan"),
                     "tokens": {"input": float("inf"), "output": 2}}}),
    ]
    log = _write_log(iterations / "003.log", lines)
    assert write_extraction(log) is None
    data = json.loads((iterations / "003.json").read_text(),
                      parse_constant=lambda word: pytest.fail(f"NNN.json holds {word}"))
    assert data["costUsd"] is None  # one step's cost is unknown: so is the sum
    assert data["tokens"]["input"] == 5
    assert data["timestamps"]["start"] == "2026-11-18T11:06:40.000+00:00"


def test_a_forged_claude_result_cost_is_null(tmp_path: Path) -> None:
    _, iterations = _project(tmp_path)
    result = {"type": "result", "session_id": "s", "subtype": "success", "is_error": False,
              "duration_ms": float("nan"), "total_cost_usd": -40, "usage": {}}
    log = _write_log(iterations / "004.log", [_j(result)])
    assert write_extraction(log) is None
    assert json.loads((iterations / "004.json").read_text())["costUsd"] is None


def test_a_huge_description_is_capped_in_the_record(tmp_path: Path) -> None:
    """Issue 31 item 8: feature files are read up to AutoMaker's practical size; only the text
    copied out of them (into a record a prompt may quote) is capped."""
    root, iterations = _project(tmp_path)
    write(ProjectPaths(root), "feature-1-login",
          {"id": "feature-1-login", "description": "Log in " + "z" * 2_000_000})
    data = extract_log(_write_log(iterations / "007.log", _claude_log(root)))
    text = data["featureDescription"]
    assert text.startswith("Log in zzz")
    assert text.endswith("…")
    assert len(text) == 4096 + 1
