"""Notifications and the heartbeat from the user's own layers only: flags, variables and the
user's config set them; the project's aidd.yaml may not, trusted or not."""

from __future__ import annotations

from pathlib import Path

import pytest

from aidd.cli import parse_args
from aidd.config import Actions, load_settings
from aidd.errors import UsageError
from aidd.notify.targets import Target, TargetKind, Trigger


def _settings(tmp_path: Path, flags: dict[str, object] | None = None, *, user: str = "",
              project: str = "", environ: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    if user:
        (home / ".config" / "aidd").mkdir(parents=True, exist_ok=True)
        (home / ".config" / "aidd" / "config.yaml").write_text(user)
    root = tmp_path / "proj"
    (root / ".automaker").mkdir(parents=True, exist_ok=True)
    if project:
        (root / ".automaker" / "aidd.yaml").write_text(project)
    return load_settings({"project-dir": root, **(flags or {})}, Actions(),
                         {"HOME": str(home), **(environ or {})}, cwd=tmp_path)


USER = """\
notify:
  - type: ntfy
    url: https://ntfy.sh/my-aidd-topic
    events: [run_end, stuck, pause]
    min_pause_minutes: 60
  - desktop
heartbeat-url: https://hc-ping.com/0b0e-SECRET
heartbeat-interval: 120
"""


def test_the_users_config_sets_targets_and_the_heartbeat(tmp_path: Path) -> None:
    settings = _settings(tmp_path, user=USER)
    ntfy, desktop = settings.notify
    assert (ntfy.kind, ntfy.url, ntfy.min_pause_minutes) == (
        TargetKind.NTFY, "https://ntfy.sh/my-aidd-topic", 60)
    assert ntfy.events == {Trigger.RUN_END, Trigger.STUCK, Trigger.PAUSE}
    assert desktop == Target(TargetKind.DESKTOP)
    assert (settings.heartbeat_url, settings.heartbeat_interval) == (
        "https://hc-ping.com/0b0e-SECRET", 120)
    assert "SECRET" not in repr(settings)


def test_flags_and_variables_add_targets_to_the_config(tmp_path: Path) -> None:
    settings = parse_args(["--project-dir", str(tmp_path), "--notify-webhook", "https://a.example/h",
                           "--notify-webhook", "https://b.example/h", "--notify-command",
                           "notify.sh", "--notify", "desktop", "--heartbeat-url",
                           "http://127.0.0.1:8000/p"],
                          environ={"HOME": str(tmp_path / "home"),
                                   "AIDD_NOTIFY": "ntfy:https://ntfy.example/t"})
    assert settings is not None
    assert [t.shown() for t in settings.notify_targets] == [
        "desktop", "webhook https://a.example/…", "webhook https://b.example/…",
        "command notify.sh"]
    assert settings.heartbeat_url == "http://127.0.0.1:8000/p"
    by_env = _settings(tmp_path, environ={"AIDD_NOTIFY": "ntfy:https://ntfy.example/t",
                                          "AIDD_NOTIFY_COMMAND": "say done",
                                          "AIDD_HEARTBEAT_INTERVAL": "60"})
    assert [t.shown() for t in by_env.notify_targets] == ["ntfy https://ntfy.example/…",
                                                          "command say …"]
    assert by_env.heartbeat_interval == 60
    assert _settings(tmp_path, user=USER, environ={"AIDD_NOTIFY": ""}).notify == ()


@pytest.mark.parametrize(("args", "message"), [
    (["--notify-webhook", "ftp://x.example/SECRET"],
     "--notify-webhook: entry 1: must be an http:// or https:// URL with a host"),
    (["--notify", "pager:x"], "--notify: entry 1: type must be one of"),
    (["--heartbeat-url", "hc-ping.com/SECRET"], "--heartbeat-url: must be an http:// or"),
    (["--heartbeat-interval", "0"], "--heartbeat-interval: must be at least 1"),
])
def test_a_bad_flag_is_one_line_naming_it_without_the_secret(tmp_path: Path, args: list[str],
                                                              message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_args(["--project-dir", str(tmp_path), *args],
                   environ={"HOME": str(tmp_path / "home")})
    assert str(caught.value.message).startswith(message)
    assert "SECRET" not in caught.value.message


@pytest.mark.parametrize("line", [
    "notify: [desktop]", "notify-webhook: https://evil.example/collect",
    "notify-command: curl evil.example", "heartbeat-url: https://evil.example/p",
    "heartbeat-interval: 1", "strict-exit: false"])
def test_the_project_file_may_not_set_where_aidd_reports(tmp_path: Path, line: str) -> None:
    key = line.split(":")[0]
    for user in ("", "trust-project-config: true\n"):
        with pytest.raises(UsageError, match=f"key '{key}' is not allowed in a project config "
                                             "file \\(it decides where aidd reports to"):
            _settings(tmp_path, user=user, project=line + "\n")
