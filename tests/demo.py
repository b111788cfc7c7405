"""Demo: aidd drives the bundled fake agent through a small project, start to finish.

    python tests/demo.py

The fake `opencode` (tests/fakes/bin) plays an agent: the initializer writes three failing
features, three coding iterations each make one pass (a source file, feature.json, CHANGELOG),
then aidd sees everything passing, runs the completion review, confirms completion and exits 73;
the status report and the morning report follow.
The scratch project is kept so you can read `.automaker/` afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FAKES = REPO / "tests" / "fakes"
STEPS = 3


def _feature(n: int, passes: bool) -> dict[str, object]:
    return {"id": f"feature-{n}-demo-step", "category": "Core", "title": f"Step {n}",
            "description": f"demo step {n}", "status": "verified" if passes else "backlog",
            "passes": passes, "priority": 2, "dependencies": []}


def _write_feature(n: int, passes: bool) -> dict[str, object]:
    return {"write_file": f".automaker/features/feature-{n}-demo-step/feature.json",
            "text": json.dumps(_feature(n, passes), indent=2)}


def _script(work: Path) -> Path:
    init = [{"say": f"Read the spec; planning {STEPS} features"}]
    init += [_write_feature(n, passes=False) for n in range(1, STEPS + 1)]
    invocations = [[*init, {"finish": "stop"}, {"exit": 0}]]
    for n in range(1, STEPS + 1):
        invocations.append([
            {"say": f"Implementing feature-{n}-demo-step"},
            {"tool": {"name": "write", "input": {"filePath": f"src/step{n}.txt"},
                      "output": "wrote 1 line"}},
            {"write_file": f"src/step{n}.txt", "text": f"step {n}\n"},
            _write_feature(n, passes=True),
            {"finish": "stop"},
            {"exit": 0},
        ])
    invocations.append([{"tool": {"name": "read", "input": {"filePath": ".automaker/todo.md"},
                                  "output": "nothing blocking"}},
                        {"say": "Reviewed todo.md and the features: nothing left to do"},
                        {"finish": "stop"}, {"exit": 0}])
    path = work / "script.json"
    path.write_text(json.dumps({"invocations": invocations}))
    return path


COMPLETED = 73  # aidd's exit code for a confirmed completion (README, Exit codes)


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="aidd-demo-"))
    spec = work / "spec.md"
    spec.write_text("# Demo\nA tiny project with three steps.\n")
    project = work / "project"
    (work / "record").mkdir()
    env = dict(os.environ)
    env.update(
        PATH=f"{FAKES / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        FAKE_AGENT_PYTHON=sys.executable,
        FAKE_AGENT_SCRIPT=str(_script(work)),
        XDG_CONFIG_HOME=str(work / "config"),
        FAKE_AGENT_RECORD=str(work / "record"),
    )
    cmd = [sys.executable, "-m", "aidd", "--project-dir", str(project), "--spec", str(spec),
           "--max-iterations", "10", "--idle-nudge-timeout", "5", "--idle-timeout", "10"]
    print("$", " ".join(cmd[2:]), flush=True)
    code = subprocess.call(cmd, env=env)
    intended = code == COMPLETED
    print(f"\naidd exited with {code}" + (" (completed: the demo ended as intended)\n"
                                          if intended else f", not {COMPLETED}: the demo failed\n"))
    subprocess.call([sys.executable, "-m", "aidd", "--project-dir", str(project), "--status"],
                    env=env)
    print(flush=True)
    subprocess.call([sys.executable, "-m", "aidd", "--project-dir", str(project), "--report"],
                    env=env)
    print("\nFiles:", *sorted(str(p.relative_to(project)) for p in project.rglob("*")
                              if p.is_file()), sep="\n  ")
    print(f"\nScratch project kept at {project}")
    return 0 if intended else 1


if __name__ == "__main__":
    raise SystemExit(main())
