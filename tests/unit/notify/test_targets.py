"""Targets as configured: every accepted form, the errors (which never quote a URL or a
command), and how a target is named in warnings and events (never with its secrets)."""

from __future__ import annotations

import pytest

from aidd.notify.targets import (
    NotifyConfigError,
    Target,
    TargetKind,
    Trigger,
    check_url,
    parse_notify,
    redact_argv,
    shown_command,
    shown_url,
)

HOOK = "https://user:pw@hooks.example.com:8443/services/T0/B1/SECRET?token=SECRET2"


def test_the_forms_of_a_target() -> None:
    (ntfy, desktop, webhook, command, mapped) = parse_notify([
        "ntfy:https://ntfy.sh/my-topic", "desktop", f"webhook:{HOOK}", "command:notify.sh -q",
        {"type": "webhook", "url": HOOK, "events": ["run_end", "pause"],
         "min-pause-minutes": 5, "gate_red_attempts": 2}])
    assert (ntfy.kind, ntfy.url) == (TargetKind.NTFY, "https://ntfy.sh/my-topic")
    assert (desktop.kind, desktop.url, desktop.command) == (TargetKind.DESKTOP, None, None)
    assert (webhook.url, command.command) == (HOOK, "notify.sh -q")
    assert ntfy.events == frozenset(Trigger)  # every event unless told otherwise
    assert (ntfy.min_pause_minutes, ntfy.gate_red_attempts) == (30, 3)
    assert mapped.events == {Trigger.RUN_END, Trigger.PAUSE}
    assert (mapped.min_pause_minutes, mapped.gate_red_attempts) == (5, 2)


def test_the_flags_name_the_kind_and_give_the_url_or_command() -> None:
    assert parse_notify((HOOK,), TargetKind.WEBHOOK) == (Target(TargetKind.WEBHOOK, HOOK),)
    assert parse_notify("say done", TargetKind.COMMAND) == (
        Target(TargetKind.COMMAND, command="say done"),)
    assert parse_notify({"type": "command", "command": "x", "events": "stuck, run_end"}
                        )[0].events == {Trigger.STUCK, Trigger.RUN_END}


@pytest.mark.parametrize(("raw", "message"), [
    ("pager:https://x.example", "type must be one of webhook, ntfy, command, desktop"),
    ("https://x.example/SECRET", "type must be one of"),
    ("webhook:ftp://x.example/SECRET", "must be an http:// or https:// URL with a host"),
    ("webhook:https:///SECRET", "with a host"),
    ("webhook:https://x.example:99999/SECRET", "invalid port"),
    ("ntfy:https://x.example/a SECRET", "without spaces or control characters"),
    ("ntfy", "must be an http(s) URL"),
    ("command:", "needs 'command'"),
    ("desktop:https://x.example/SECRET", "a desktop target takes no 'url'"),
    ({"type": "webhook", "url": "https://x.example/SECRET", "command": "SECRET"},
     "a webhook target takes no 'command'"),
    ({"type": "ntfy", "url": "https://x.example", "topic": "SECRET"}, "unknown key 'topic'"),
    ({"type": "ntfy", "url": "https://x.example", "events": ["lunch"]}, "unknown event 'lunch'"),
    ({"type": "ntfy", "url": "https://x.example", "events": []}, "names no event"),
    ({"type": "ntfy", "url": "https://x.example", "min_pause_minutes": -1},
     "'min_pause_minutes' must be a whole number from 0 to 10080"),
    ({"type": "ntfy", "url": "https://x.example", "gate_red_attempts": True},
     "'gate_red_attempts' must be a whole number from 1 to 1000"),
    (42, "must be TYPE:URL_OR_COMMAND"),
])
def test_bad_targets_say_why_without_quoting_a_secret(raw: object, message: str) -> None:
    with pytest.raises(NotifyConfigError, match=r"^entry 1: ") as caught:
        parse_notify(raw)
    assert message in str(caught.value)
    assert "SECRET" not in str(caught.value)


def test_a_url_is_shown_without_user_password_path_or_query() -> None:
    assert shown_url(HOOK) == "https://hooks.example.com:8443/…"
    assert shown_url("http://[::1]:8080/x") == "http://[::1]:8080/…"
    assert shown_command("curl -H 'Authorization: Bearer SECRET' https://x") == "curl …"
    assert shown_command("notify.sh") == "notify.sh"
    webhook, command = parse_notify([f"webhook:{HOOK}", "command:curl -d SECRET x"])
    assert webhook.shown() == "webhook https://hooks.example.com:8443/…"
    assert command.shown() == "command curl …"
    assert "SECRET" not in repr(webhook) + repr(command)  # Settings' repr holds them


def test_check_url_keeps_the_url_as_given() -> None:
    assert check_url(HOOK) == HOOK
    with pytest.raises(NotifyConfigError):
        check_url("x" * 3000)


def test_the_recorded_command_line_shows_no_secret() -> None:
    argv = ("--project-dir", "p", "--notify-webhook", HOOK, f"--heartbeat-url={HOOK}",
            "--notify", "ntfy:https://ntfy.sh/SECRET", "--notify", "desktop", "--notify",
            "command:curl -d SECRET x", "--notify-command", "mail -s SECRET me",
            "--max-iterations", "3")
    assert redact_argv(argv) == (
        "--project-dir", "p", "--notify-webhook", "https://hooks.example.com:8443/…",
        "--heartbeat-url=https://hooks.example.com:8443/…", "--notify", "ntfy:https://ntfy.sh/…",
        "--notify", "desktop", "--notify", "command:curl …", "--notify-command", "mail …",
        "--max-iterations", "3")
