"""The scripted agent of bench/circular_bench.py (issue 32): on each invocation it picks a
feature as the coding prompt asks (the one in progress, else the first workable one by folder
name; never a `failed`, `waiting_approval` or done one), does what its scenario says for that
feature, and hands the steps to tests/fakes/fake_agent.py, which speaks the CLI's own format.

    circular_agent.py <cli> <argv...>      (through the `opencode` wrapper the bench writes)

CIRCULAR_PLAN: a JSON file {"features": {folder: behaviour}, "sleep_at": {folder: k},
"log": path, "state": dir}. Behaviours: ok (finishes it), broken (the same broken fix, exit 3),
breaks_test (claims it, leaves a test broken: the gate goes red), context (its conversation
overflows). The k-th attempt (from 0) at a folder in `sleep_at` works for minutes instead: the
bench kills the machine under it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

FAKE_AGENT = Path(__file__).resolve().parent.parent / "tests" / "fakes" / "fake_agent.py"
READ: dict[str, Any] = {"tool": {"name": "read", "input": {"path": "README.md"}}}
WORKABLE = (None, "", "backlog", "pending", "ready", "in_progress")


def pick(root: Path) -> tuple[str, dict[str, Any]] | None:
    found = []
    for folder in sorted((root / ".automaker" / "features").iterdir()):
        data = json.loads((folder / "feature.json").read_text())
        status = data.get("status")
        if status in WORKABLE and not (not status and data.get("passes") is True):
            found.append((status != "in_progress", folder.name, data))
    if not found:
        return None
    _, name, data = min(found, key=lambda item: item[:2])
    return name, data


def feature_file(name: str, data: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {"write_file": f".automaker/features/{name}/feature.json",
            "text": json.dumps({**data, **changes})}


def steps(name: str, data: dict[str, Any], behaviour: str, seen: int,
          sleeps: bool) -> list[dict[str, Any]]:
    started = feature_file(name, data, status="in_progress")
    if sleeps:
        return [{"init": True}, READ, started,
                {"write_file": f"src/{name}.py", "text": "half = (\n"},
                {"say": "working on it"}, {"sleep": 300}]
    if behaviour == "broken":
        return [{"init": True}, READ, started,
                {"write_file": f"src/{name}.py", "text": "def fix(:\n"},
                {"say": "the same fix again"}, {"exit": 3}]
    if behaviour == "breaks_test":
        return [{"init": True}, READ, started,
                {"write_file": f"src/{name}.broken", "text": "a test this breaks\n"},
                {"say": "implemented"}, {"finish": True}]
    if behaviour == "context":
        return [{"init": True}, READ, started,
                {"write_file": f"src/{name}.py", "text": f"part = {seen}\n"},
                {"error": {"name": "ContextOverflowError",
                           "message": "maximum context length is 128000 tokens"}},
                {"exit": 1}]
    return [{"init": True}, READ, feature_file(name, data, status="verified", passes=True),
            {"write_file": f"src/{name}.py", "text": "def done():\n    return 1\n"},
            {"say": "done"}, {"finish": True}]


def main() -> None:
    args = sys.argv[2:]
    if args == ["--version"] or args[:1] in (["session"], ["export"]):  # not an attempt
        os.execv(sys.executable, [sys.executable, str(FAKE_AGENT), *sys.argv[1:]])
    plan = json.loads(Path(os.environ["CIRCULAR_PLAN"]).read_text())
    state = Path(plan["state"])
    picked = pick(Path.cwd())
    name = picked[0] if picked is not None else None
    behaviour = plan["features"].get(name, "ok") if name is not None else "none"
    counts = state / "counts.json"
    seen = json.loads(counts.read_text()) if counts.exists() else {}
    sleeps = False
    if picked is None:
        script = [{"init": True}, READ, {"say": "nothing left"}, {"finish": True}]
    else:
        sleeps = plan.get("sleep_at", {}).get(picked[0]) == seen.get(picked[0], 0)
        script = steps(picked[0], picked[1], behaviour, seen.get(picked[0], 0), sleeps)
        seen[picked[0]] = seen.get(picked[0], 0) + 1
        counts.write_text(json.dumps(seen))
    with open(plan["log"], "a", encoding="utf-8") as log:
        log.write(json.dumps({"feature": name, "behaviour": behaviour, "pid": os.getpid(),
                              "sleeps": sleeps}) + "\n")
    number = sum(1 for _ in state.glob("script-*.json"))
    script_file = state / f"script-{number:03d}.json"
    script_file.write_text(json.dumps({"invocations": [script]}))
    os.environ["FAKE_AGENT_SCRIPT"] = str(script_file)
    os.environ["FAKE_AGENT_RECORD"] = str(state / f"records-{number:03d}")
    os.execv(sys.executable, [sys.executable, str(FAKE_AGENT), *sys.argv[1:]])


if __name__ == "__main__":
    main()
