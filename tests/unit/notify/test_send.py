"""One delivery for real: requests to a local HTTP server (webhook JSON, ntfy's title, a ping),
the failures in words without the URL, and commands bounded and tree-killed."""

from __future__ import annotations

import base64
import json
import os
import ssl
import time
from pathlib import Path

import psutil
import pytest

from aidd.notify.send import DeliveryError, deliver
from tests.localhttp import dead_endpoint, drip_endpoint, recorder
from tests.waiting import wait_for

BODY = {"trigger": "stuck", "title": "aidd p: stuck", "text": "x", "event": {"event": "stuck"}}


def _running(pid: int) -> bool:
    """Alive and not a zombie: killed processes this test's process does not reap stay
    zombies until init does."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _job(kind: str, **fields: object) -> dict[str, object]:
    return {"kind": kind, "title": "aidd café: stuck", "message": "attempts 1, 2, 3",
            "body": BODY, **fields}


def test_a_webhook_gets_the_json_an_ntfy_topic_the_title_a_ping_a_get() -> None:
    with recorder() as server:
        deliver(_job("webhook", url=server.url + "/hook?token=t"), {})
        deliver(_job("ntfy", url=server.url + "/topic"), {})
        deliver({"kind": "ping", "url": server.url + "/hb/start"}, {})
    hook, topic, ping = server.requests
    assert (hook.method, hook.path, hook.json()) == ("POST", "/hook?token=t", BODY)
    assert hook.headers["Content-Type"] == "application/json"
    assert hook.headers["User-Agent"].startswith("aidd/")
    assert (topic.method, topic.body) == ("POST", b"attempts 1, 2, 3")
    assert topic.headers["Title"] == "=?utf-8?q?aidd_caf=C3=A9=3A_stuck?="  # RFC 2047
    assert (ping.method, ping.path, ping.body) == ("GET", "/hb/start", b"")
    assert topic.headers["Priority"] == "default"
    assert "Tags" not in topic.headers


def test_an_ntfy_topic_hears_a_failed_run_with_high_priority_and_a_tag() -> None:
    with recorder() as server:
        deliver(_job("ntfy", url=server.url + "/topic", priority="high", tags=["failed"]), {})
    (topic,) = server.requests
    assert (topic.headers["Priority"], topic.headers["Tags"]) == ("high", "failed")


@pytest.mark.parametrize(("status", "retry"), [(404, False), (401, False), (429, True),
                                               (503, True)])
def test_an_http_error_says_its_status_and_whether_to_try_again(status: int,
                                                               retry: bool) -> None:
    with recorder() as server:
        server.status["/hook"] = status
        with pytest.raises(DeliveryError) as caught:
            deliver(_job("webhook", url=server.url + "/hook"), {})
    assert (caught.value.why, caught.value.retry) == (f"HTTP {status}", retry)


def test_a_dead_endpoint_costs_the_timeout_and_the_reason_hides_the_url() -> None:
    with dead_endpoint() as url:
        start = time.monotonic()
        with pytest.raises(DeliveryError) as caught:
            deliver(_job("webhook", url=f"{url}/SECRET"), {}, timeout_s=0.3)
        assert time.monotonic() - start < 2.0
    assert caught.value.why == "timed out"
    with recorder() as server:
        port = server.url.rsplit(":", 1)[1]
    with pytest.raises(DeliveryError) as refused:  # the server is gone: nothing listens
        deliver(_job("webhook", url=f"http://127.0.0.1:{port}/SECRET"), {})
    assert refused.value.why == "connection refused"
    assert refused.value.retry


def test_a_user_and_password_in_the_url_are_sent_as_basic_authorization() -> None:
    with recorder() as server:
        url = server.url.replace("http://", "http://me:p%40ss@") + "/topic"
        deliver(_job("ntfy", url=url), {})
    (request,) = server.requests
    assert request.path == "/topic"
    assert request.headers["Authorization"] == "Basic " + base64.b64encode(b"me:p@ss").decode()


@pytest.mark.parametrize("kind", ["webhook", "ntfy", "ping"])
def test_a_redirect_is_a_failure_and_the_credentials_never_reach_the_other_host(
        kind: str) -> None:
    """Issue 27 item 11: urllib followed a 302 to another host with the Authorization header,
    a POST arriving there as a GET without its body, and called it delivered."""
    with recorder() as other, recorder() as server:
        server.redirect["/hook"] = other.url + "/stolen"
        url = server.url.replace("http://", "http://me:SECRET@") + "/hook"
        with pytest.raises(DeliveryError) as caught:
            deliver(_job(kind, url=url), {})
    assert (caught.value.why, caught.value.retry) == ("HTTP 302: a redirect, not followed",
                                                      False)
    assert [r.path for r in server.requests] == ["/hook"]
    assert other.requests == []


def test_a_webhook_over_tls_is_delivered_and_verified(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The TLS connection carries the same deadline watch as a plain one (send._WatchedTls),
    and the server's certificate is checked: an unknown CA is a failed delivery."""
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server)
    with recorder(tls=server) as endpoint:
        with pytest.raises(DeliveryError):  # the test CA is not trusted yet
            deliver(_job("webhook", url=endpoint.url + "/hook"), {}, timeout_s=5)
        bundle = tmp_path / "ca.pem"
        ca.cert_pem.write_to_path(str(bundle))
        monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
        deliver(_job("webhook", url=endpoint.url + "/hook"), {}, timeout_s=5)
    assert [(r.method, r.path) for r in endpoint.requests] == [("POST", "/hook")]
    assert json.loads(endpoint.requests[0].body) == BODY


def test_an_answer_dripped_a_byte_at_a_time_ends_at_the_timeout() -> None:
    """Issue 27 item 12: each socket wait was short, so the socket timeout never fired."""
    with drip_endpoint(every_s=0.05) as url:
        start = time.monotonic()
        with pytest.raises(DeliveryError) as caught:
            deliver(_job("webhook", url=url + "/hook"), {}, timeout_s=0.5)
        took = time.monotonic() - start
    assert caught.value.why == "timed out"
    assert took < 3.0  # the drip lasts minutes


def test_a_command_reads_the_json_and_sees_the_words_in_its_environment(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    deliver(_job("command", command=f'cat > {out}; echo "$AIDD_NOTIFY_TITLE|'
                 f'$AIDD_NOTIFY_MESSAGE|$AIDD_NOTIFY_TRIGGER|$PWD" >> {out}',
                 cwd=str(tmp_path)), dict(os.environ))
    body, words = out.read_text().splitlines()
    assert json.loads(body) == BODY
    assert words == f"aidd café: stuck|attempts 1, 2, 3|stuck|{tmp_path}"


def test_a_failing_command_says_its_status(tmp_path: Path) -> None:
    with pytest.raises(DeliveryError, match=r"^exited 3$"):
        deliver(_job("command", command="exit 3"), dict(os.environ))


def test_a_command_over_the_timeout_is_killed_with_what_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "child"
    start = time.monotonic()
    with pytest.raises(DeliveryError, match=r"^timed out after 0\.5s$"):
        deliver(_job("command", command=f"sleep 1000 & echo $! > {pid_file}; wait"),
                dict(os.environ), timeout_s=0.5)
    assert time.monotonic() - start < 4.0
    wait_for(pid_file.exists, what="the child's pid")
    assert not _running(int(pid_file.read_text()))


def test_a_command_that_leaves_a_process_behind_has_it_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "child"
    deliver(_job("command", command=f"sleep 1000 >/dev/null 2>&1 & echo $! > {pid_file}"),
            dict(os.environ))
    assert not _running(int(pid_file.read_text()))


def test_desktop_runs_notify_send_with_title_and_message(tmp_path: Path) -> None:
    args = tmp_path / "args"
    fake = tmp_path / "notify-send"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {args}\n')
    fake.chmod(0o755)
    deliver(_job("desktop"), {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"})
    assert args.read_text().splitlines() == ["--app-name=aidd", "aidd café: stuck",
                                             "attempts 1, 2, 3"]
    with pytest.raises(DeliveryError, match=r"^cannot start notify-send: ") as caught:
        deliver(_job("desktop"), {**os.environ, "PATH": str(tmp_path / "none")})
    assert not caught.value.retry
