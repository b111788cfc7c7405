"""Demo: aidd runs three iterations against the bundled fake agent on a scratch project.

    python tests/demo.py [--keep]

The fake `opencode` (tests/fakes/bin) answers each prompt by writing a feature file and a
source file, so the run shows the initializer, then coding iterations, then the metadata.
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


def _script(work: Path) -> Path:
    invocations = []
    for n in range(1, 4):
        feature = {"id": f"feature-{n}-demo-step", "category": "Core", "title": f"Step {n}",
                   "description": f"demo step {n}", "status": "completed", "passes": True,
                   "priority": 2, "dependencies": []}
        invocations.append([
            {"say": f"Iteration {n}: implementing demo step {n}"},
            {"write_file": f".automaker/features/feature-{n}-demo-step/feature.json",
             "text": json.dumps(feature, indent=2)},
            {"write_file": f"src/step{n}.txt", "text": f"step {n}\n"},
            {"finish": "stop"},
            {"exit": 0},
        ])
    path = work / "script.json"
    path.write_text(json.dumps({"invocations": invocations}))
    return path


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
           "--max-iterations", "3", "--idle-nudge-timeout", "5", "--idle-timeout", "10"]
    print("$", " ".join(cmd[2:]), flush=True)
    code = subprocess.call(cmd, env=env)
    print(f"\naidd exited with {code}\n")
    subprocess.call([sys.executable, "-m", "aidd", "--project-dir", str(project), "--status"],
                    env=env)
    print("\nFiles:", *sorted(str(p.relative_to(project)) for p in project.rglob("*")
                              if p.is_file()), sep="\n  ")
    print(f"\nScratch project kept at {project}")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
