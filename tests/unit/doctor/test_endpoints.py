"""Endpoints asked for real on 127.0.0.1: reachable, HEAD refused then GET, an error status,
a closed port, and --offline; no secret of a URL ever shown."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from aidd.config import Actions, Settings, load_settings
from aidd.doctor.endpoints import check_endpoints
from aidd.doctor.findings import Status
from aidd.errors import ExitCode
from aidd.options import BY_NAME, convert
from tests.localhttp import recorder

SECRET = "tok3n-s3cret"


def settings(tmp_path: Path, **flags: Any) -> Settings:
    given = {k.replace("_", "-"): v for k, v in flags.items()}
    given = {k: convert(BY_NAME[k], v) for k, v in given.items()}
    return load_settings({"project-dir": tmp_path, **given}, Actions(doctor=True),
                         {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}, cwd=tmp_path)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_nothing_configured_is_one_ok_line(tmp_path: Path) -> None:
    (found,) = check_endpoints(settings(tmp_path), offline=False)
    assert found.status is Status.OK


def test_reachable_endpoints_are_asked_with_head(tmp_path: Path) -> None:
    with recorder() as server:
        s = settings(tmp_path, heartbeat_url=f"{server.url}/ping/{SECRET}",
                     notify=(f"ntfy:{server.url}/{SECRET}",))
        found = check_endpoints(s, offline=False, timeout_s=3)
    assert [f.name for f in found] == ["notify ntfy", "heartbeat"]
    assert [f.status for f in found] == [Status.OK, Status.OK]
    assert [r.method for r in server.requests] == ["HEAD", "HEAD"]
    assert all(SECRET not in f.detail + f.fix for f in found)
    assert found[1].detail == f"{server.url}/… reachable (HTTP 200)"


def test_head_not_allowed_falls_back_to_get_and_a_404_warns(tmp_path: Path) -> None:
    with recorder() as server:
        server.status[f"/hook/{SECRET}"] = 405
        server.status[f"/gone/{SECRET}"] = 404
        s = settings(tmp_path, notify_webhook=(f"{server.url}/hook/{SECRET}",
                                               f"{server.url}/gone/{SECRET}"))
        hook, gone = check_endpoints(s, offline=False, timeout_s=3)
    assert [r.method for r in server.to(f"/hook/{SECRET}")] == ["HEAD", "GET"]
    assert hook.status is Status.OK  # reachable: a POST-only webhook refuses HEAD and GET
    assert (gone.status, "HTTP 404" in gone.detail) == (Status.WARN, True)


def test_a_redirect_warns_and_is_not_followed_with_the_credentials(tmp_path: Path) -> None:
    with recorder() as other, recorder() as server:
        server.redirect["/hb"] = other.url + "/hb"
        url = server.url.replace("http://", f"http://me:{SECRET}@") + "/hb"
        (found,) = check_endpoints(settings(tmp_path, heartbeat_url=url), offline=False,
                                   timeout_s=3)
    assert (found.status, "HTTP 302, a redirect" in found.detail) == (Status.WARN, True)
    assert [r.method for r in server.requests] == ["HEAD"]
    assert other.requests == []


def test_a_closed_port_fails_with_2_without_the_secret(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/{SECRET}"
    (found,) = check_endpoints(settings(tmp_path, heartbeat_url=url), offline=False)
    assert (found.status, found.code) == (Status.FAIL, ExitCode.INVALID_ARGS)
    assert "unreachable: connection refused" in found.detail
    assert SECRET not in found.detail


def test_offline_asks_nothing(tmp_path: Path) -> None:
    with recorder() as server:
        (found,) = check_endpoints(settings(tmp_path, heartbeat_url=server.url), offline=True)
    assert found.status is Status.SKIP
    assert server.requests == []


def test_command_and_desktop_targets_need_their_program(tmp_path: Path) -> None:
    s = settings(tmp_path, notify=("command:no-such-notifier-xyz --token abc", "desktop"),
                 notify_command=("cat",))
    missing, desktop, cat = check_endpoints(s, offline=False)
    assert missing.status is Status.WARN
    assert "abc" not in missing.detail
    assert desktop.status in (Status.OK, Status.WARN)  # notify-send may or may not be here
    assert cat.status is Status.OK
