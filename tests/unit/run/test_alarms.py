"""The run's notifications in-process, the worker played by a fake courier: what is queued
for which event, how outcomes become warnings and `notify_failed` (never after `run_end`), a
heartbeat's failures said once, a full queue said once, and nothing that can stop the run."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from aidd.config import Actions, load_settings
from aidd.console import Console
from aidd.events import EventLog
from aidd.notify.courier import OnOutcome
from aidd.options import BY_NAME, convert
from aidd.project.paths import ProjectPaths
from aidd.run.alarms import END_RETRY_PAUSE_S, END_WAIT_S, Alarms
from aidd.run.journal import Journal
from aidd.session.orphans import MARK_VAR
from tests.fakes.clock import FakeClock

HOOK = "https://hooks.example/SECRET"


class FakeCourier:
    def __init__(self, env: Mapping[str, str], on_outcome: OnOutcome) -> None:
        self.env, self.on_outcome = env, on_outcome
        self.jobs: list[Mapping[str, Any]] = []
        self.room = 100
        self.closed: float | None = None

    def start(self) -> None:
        pass

    def send(self, job: Mapping[str, Any]) -> bool:
        if len(self.jobs) >= self.room:
            return False
        self.jobs.append(job)
        return True

    def close(self, wait_s: float) -> None:
        self.closed = wait_s

    def answer(self, index: int, ok: bool, why: str | None = None, tries: int = 1) -> None:
        self.on_outcome(self.jobs[index], ok, why, tries)


class Run:
    def __init__(self, tmp_path: Path, environ: dict[str, str] | None = None,
                 **flags: Any) -> None:
        paths = ProjectPaths(tmp_path / "proj")
        paths.automaker.mkdir(parents=True)
        given = {"project-dir": paths.root, **{k.replace("_", "-"): convert(
            BY_NAME[k.replace("_", "-")], v) for k, v in flags.items()}}
        settings = load_settings(given, Actions(), {"HOME": str(tmp_path), "PATH": "/usr/bin",
                                                    MARK_VAR: "m", **(environ or {})})
        self.out = io.BytesIO()
        self.events = EventLog(paths.events, "20261122T120000Z-1", root=paths.root,
                               clock=FakeClock())
        self.journal = Journal(Console(self.out), self.events, FakeClock(), paths.root)
        self.paths = paths
        self.couriers: list[FakeCourier] = []
        self.alarms = Alarms(SimpleNamespace(settings=settings, paths=paths),  # type: ignore[arg-type]
                             self.journal, self._courier)
        self.alarms.start()

    def _courier(self, env: Mapping[str, str], on_outcome: OnOutcome) -> FakeCourier:
        self.couriers.append(FakeCourier(env, on_outcome))
        return self.couriers[-1]

    @property
    def courier(self) -> FakeCourier:
        (courier,) = self.couriers
        return courier

    def said(self) -> str:
        return self.out.getvalue().decode()

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.paths.events.read_text().splitlines()]


def test_nothing_configured_starts_nothing(tmp_path: Path) -> None:
    run = Run(tmp_path)
    assert run.couriers == []
    assert run.events.listeners == []
    run.alarms.finish(0)


def test_each_event_a_target_hears_is_queued_without_the_agents_mark(tmp_path: Path) -> None:
    run = Run(tmp_path, notify_webhook=(HOOK,))
    run.events.emit("iteration_end", number=1)
    run.events.emit("stuck", iterations=[1, 2, 3])
    (job,) = run.courier.jobs
    assert (job["kind"], job["url"], job["trigger"]) == ("webhook", HOOK, "stuck")
    assert job["body"]["project"] == str(run.paths.root)
    assert MARK_VAR not in run.courier.env
    run.alarms.finish(0)
    assert run.courier.closed == END_WAIT_S


def test_a_failure_is_a_warning_and_an_event_also_after_run_end(tmp_path: Path) -> None:
    """The run's end notification fails after run_end: still a warning and an event, the one
    event that may follow run_end (issue 28 item 8); the end's jobs retry at once, and each
    job says where the worker keeps a failure nobody hears any more."""
    run = Run(tmp_path, notify_webhook=(HOOK,))
    run.events.emit("stuck", iterations=[1, 2, 3])
    run.courier.answer(0, True)
    assert "notification" not in run.said()
    run.courier.answer(0, False, "HTTP 500", 3)
    run.events.emit("run_end", exit_code=0, reason="done")
    run.courier.answer(1, False, "timed out", 3)  # the run_end notification, heard late
    run.alarms.finish(0)
    said = run.said()
    assert "notification stuck to webhook https://hooks.example/… failed: HTTP 500 (after 3 " \
           "tries)" in said
    assert "notification run_end to webhook https://hooks.example/… failed: timed out" in said
    assert [(e["event"], e.get("trigger")) for e in run.lines()] == [
        ("stuck", None), ("notify_failed", "stuck"), ("run_end", None),
        ("notify_failed", "run_end")]
    stuck, end = run.courier.jobs[0], run.courier.jobs[1]
    assert stuck["keep"] == end["keep"] == {"root": str(run.paths.root),
                                            "run": run.events.run_id}
    assert "pause_s" not in stuck
    assert end["pause_s"] == END_RETRY_PAUSE_S
    assert "SECRET" not in said + run.paths.events.read_text()


def test_heartbeat_pings_and_its_failures_said_once_until_one_succeeds(tmp_path: Path) -> None:
    run = Run(tmp_path, heartbeat_url="https://hc.example/SECRET", heartbeat_interval="300")
    assert run.events.listeners == []  # no target: the heartbeat alone
    (start,) = run.courier.jobs
    assert start["url"] == "https://hc.example/SECRET/start"
    for outcome in (False, False, True, False):
        run.courier.answer(0, outcome, "timed out")
    run.alarms.finish(124)
    assert run.courier.jobs[-1]["url"] == "https://hc.example/SECRET/124"
    assert run.said().count("heartbeat ping https://hc.example/… failed: timed out") == 2
    assert [e["trigger"] for e in run.lines()] == ["heartbeat", "heartbeat"]


def test_a_full_queue_is_said_once(tmp_path: Path) -> None:
    run = Run(tmp_path, notify_webhook=(HOOK,))
    run.courier.room = 1
    for _ in range(3):
        run.events.emit("stuck", iterations=[1])
    assert len(run.courier.jobs) == 1
    assert run.said().count("notification dropped: stuck to webhook https://hooks.example/…") == 1


def test_desktop_without_notify_send_is_one_warning(tmp_path: Path) -> None:
    run = Run(tmp_path, environ={"PATH": str(tmp_path / "empty")}, notify=("desktop",))
    assert "desktop notifications off: notify-send is not on PATH" in run.said()
    assert run.couriers == []  # no other target: nothing to start


@pytest.mark.parametrize("failure", [OSError(24, "Too many open files"), RuntimeError("bug")])
def test_a_worker_that_cannot_start_leaves_the_run_going(tmp_path: Path,
                                                         failure: Exception) -> None:
    class Failing(FakeCourier):
        def start(self) -> None:
            raise failure

    run = Run(tmp_path)
    alarms = Alarms(SimpleNamespace(settings=load_settings(  # type: ignore[arg-type]
        {"project-dir": run.paths.root, "notify-webhook": convert(BY_NAME["notify-webhook"],
                                                                  (HOOK,))},
        Actions(), {"HOME": str(tmp_path)}), paths=run.paths), run.journal, Failing)
    alarms.start()
    alarms.finish(0)
    assert "notifications and heartbeat off: " in run.said()
    assert run.events.listeners == []
