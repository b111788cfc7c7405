"""Project strings on the terminal (issue 27 item 7): a feature category, a todo item and a path
carrying a clipboard write (OSC 52), a screen clear, CR, BS and a C1 CSI reach `--status`, its
JSON, the checkpoints list, the doctor and a run's own lines escaped, never as the bytes a
terminal acts on."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import FakeAgent
from tests.featurefiles import feature
from tests.integration.runs import LIMITS, OK, onboarded

EVIL = "a\x1b]52;c;cHduZWQ=\x07b\x1b[2Jc\rd\be\x9b31mf\x7fg"
# What a terminal acts on: C0 but tab and newline, DEL, C1 (as UTF-8: C2 80..C2 9F).
RAW = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


def _aidd(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    """Its output as bytes: text mode would turn the CR into a newline."""
    return subprocess.run([sys.executable, "-m", "aidd", *args], env=env, capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=60, check=False)


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    feature(root, "feature-1-a", category=EVIL)
    (root / ".automaker" / "todo.md").write_text(f"- [ ] fix {EVIL}\n- [x] done {EVIL}\n")
    return root


def test_status_text_and_json_show_control_characters_escaped(
        aidd_env: dict[str, str], tmp_path: Path) -> None:
    root = _project(tmp_path)
    done = _aidd(aidd_env, "--project-dir", str(root), "--status")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert not RAW.search(text), text
    shown = r"a\x1b]52;c;cHduZWQ=\x07b\x1b[2Jc\rd\x08e\u009b31mf\x7fg"
    assert text.decode().count(shown) == 3  # the category and both todo items
    assert not RAW.search((root / ".automaker" / "status.md").read_bytes())
    data = _aidd(aidd_env, "--project-dir", str(root), "--status", "--json").stdout
    assert not RAW.search(data), data
    report = json.loads(data)
    assert report["categories"][0]["name"] == EVIL  # escaped, not changed
    assert report["todo"]["items"]["incomplete"] == [f"fix {EVIL}"]


def test_the_doctor_and_checkpoints_show_a_project_path_escaped(
        aidd_env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / f"proj{EVIL}"
    root.mkdir()
    out = {}
    for args in (("--doctor", "--offline"), ("--doctor", "--offline", "--json"),
                 ("--checkpoints", "--json"), ("--checkpoints",)):
        done = _aidd(aidd_env, "--project-dir", str(root), *args)  # the doctor may fail
        assert not RAW.search(done.stdout + done.stderr), (args, done.stdout + done.stderr)
        out[args] = done.stdout
    assert rb"proja\x1b]52;c;cHduZWQ=\x07b" in out[("--doctor", "--offline")]
    assert json.loads(out[("--doctor", "--offline", "--json")])["project_dir"] == str(root)


def test_a_run_shows_the_project_strings_it_quotes_escaped(
        env: dict[str, str], fake_agent: FakeAgent, tmp_path: Path) -> None:
    """The header and aidd's messages name the project directory (a folder from an archive
    may be named so); the agent's own output (plain here) is mirrored as it is."""
    project = tmp_path / f"proj{EVIL}"
    project.mkdir()
    onboarded(project)
    fake_agent.script(OK)
    done = _aidd(env, "--project-dir", str(project), "--max-iterations", "1", *LIMITS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert rb"[aidd] Project: " + str(tmp_path).encode() + rb"/proja\x1b]52;c;" in done.stdout
    assert not RAW.search(done.stdout + done.stderr), done.stdout
