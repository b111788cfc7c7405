"""`aidd --show-config`: every effective setting with where it came from, secrets shown as
everywhere else (issue 28 item 9)."""

from __future__ import annotations

import json
from pathlib import Path

from aidd.config import Actions, load_settings
from aidd.config.show import show_config
from aidd.options import OPTIONS


def _settings(tmp_path: Path):  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    (home / ".config" / "aidd").mkdir(parents=True)
    user = home / ".config" / "aidd" / "config.yaml"
    user.write_text("idle-timeout: 1200\ncli: claude-code\n")
    root = tmp_path / "proj"
    (root / ".automaker").mkdir(parents=True)
    (root / ".automaker" / "aidd.yaml").write_text("idle-timeout: 600\n")
    environ = {"HOME": str(home), "AIDD_TIMEOUT": "1800"}
    flags = {"project-dir": root, "heartbeat-url": "https://user:pw@hc.example/ping/SECRET?k=1",
             "max-iterations": 5}
    return load_settings(flags, Actions(show_config=True), environ, cwd=tmp_path), user, root


def test_each_setting_says_where_it_came_from(tmp_path: Path) -> None:
    settings, user, root = _settings(tmp_path)
    text = show_config(settings, as_json=False)
    lines = {line.split()[0]: line for line in text.splitlines()}
    assert set(lines) == {opt.name for opt in OPTIONS}
    assert lines["cli"].endswith(f"claude-code  (user config {user})")
    assert lines["idle-timeout"].endswith(
        f"600  (project config {root / '.automaker' / 'aidd.yaml'})")
    assert lines["timeout"].endswith("1800  (variable AIDD_TIMEOUT)")
    assert lines["max-iterations"].endswith("5  (flag --max-iterations)")
    assert lines["liveness"].endswith("signals  (built-in)")
    assert "SECRET" not in text
    assert "pw" not in text
    assert "https://hc.example/…  (flag --heartbeat-url)" in lines["heartbeat-url"]


def test_json_holds_the_same_rows(tmp_path: Path) -> None:
    settings, user, _ = _settings(tmp_path)
    data = json.loads(show_config(settings, as_json=True))
    rows = {row["name"]: row for row in data["settings"]}
    assert rows["cli"] == {"name": "cli", "value": "claude-code", "from": f"user config {user}"}
    assert rows["max-iterations"]["value"] == 5
    assert rows["gate"]["value"] == []
    assert "SECRET" not in json.dumps(data)
    assert data["gate_waiting_for_approval"] == []
