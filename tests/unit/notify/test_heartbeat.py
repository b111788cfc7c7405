"""The dead-man's switch: where each ping goes, and the beat of its own thread."""

from __future__ import annotations

from typing import Any

from aidd.notify.heartbeat import Heartbeat, ping_job, ping_url
from tests.waiting import wait_for

URL = "https://hc-ping.example/uuid-SECRET"


def test_the_ping_urls_follow_the_cron_monitor_convention() -> None:
    assert ping_url(URL) == URL
    assert ping_url(URL, "start") == URL + "/start"
    assert ping_url(URL + "/", "0") == URL + "/0"
    assert ping_url("https://m.example/p?key=SECRET", "73") == "https://m.example/p/73?key=SECRET"


def test_start_and_end_pings_are_retried_a_periodic_one_is_not() -> None:
    assert ping_job(URL, "start")["tries"] == 3
    assert ping_job(URL, "124")["tries"] == 3
    assert ping_job(URL) == {"kind": "ping", "url": URL, "tries": 1, "trigger": "heartbeat",
                             "shown": "heartbeat ping https://hc-ping.example/…"}


def test_start_then_every_interval_then_the_exit_code() -> None:
    sent: list[dict[str, Any]] = []
    beat = Heartbeat(URL, 0.05, sent.append)
    beat.start()
    wait_for(lambda: len(sent) >= 3, what="two periodic pings")
    beat.finish(73)
    urls = [job["url"] for job in sent]
    assert urls[0] == URL + "/start"
    assert urls[-1] == URL + "/73"
    assert set(urls[1:-1]) == {URL}
    count = len(sent)
    wait_for(lambda: True)
    assert len(sent) == count  # the thread stopped


def test_a_failed_run_that_exits_0_ends_with_fail_another_code_stays_itself() -> None:
    for code, failed, last in ((0, True, "/fail"), (0, False, "/0"), (8, True, "/8"),
                               (10, True, "/10")):
        sent: list[dict[str, Any]] = []
        beat = Heartbeat(URL, 3600, sent.append)
        beat.finish(code, failed)
        assert sent[-1]["url"] == URL + last
