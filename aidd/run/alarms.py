"""The run's notifications and heartbeat (README "Notifications"): started after `run_start`,
told every event the run emits, finished after `run_end`. Never blocking, never fatal: the
worker process delivers; a failure is a warning and a `notify_failed` event (a warning only
once `run_end` is written, which stays the run's last line)."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from aidd.notify.rules import Rules, job
from aidd.notify.targets import Target, TargetKind
from aidd.run.journal import Journal
from aidd.run.preflight import RunPlan
from aidd.session.orphans import MARK_VAR

if TYPE_CHECKING:  # imported by a run that notifies: most runs need neither (issue 33)
    from aidd.notify.courier import Courier, OnOutcome
    from aidd.notify.heartbeat import Heartbeat

# At the run's end, how long aidd waits to hear how its last notifications went. A dead endpoint
# costs the run this much and no more (issue 16: within 1 s); the worker goes on delivering.
# 0.5 s missed a refused connection when a loaded machine was slow to start the worker.
END_WAIT_S = 0.9
END_RETRY_PAUSE_S = 0.05  # three tries of a refused connection fit in END_WAIT_S

MakeCourier: TypeAlias = "Callable[[Mapping[str, str], OnOutcome], Courier]"


class Alarms:
    def __init__(self, plan: RunPlan, journal: Journal,
                 courier: MakeCourier | None = None) -> None:
        """`courier` makes the worker's courier (default: `Courier`; tests play it
        in-process)."""
        self.plan = plan
        self.journal = journal
        self._make_courier = courier
        self._env = {k: v for k, v in plan.settings.environ.items() if k != MARK_VAR}
        self._courier: Courier | None = None
        self._heartbeat: Heartbeat | None = None
        self._rules = Rules((), plan.paths.root.name)
        self._host = os.uname().nodename
        self._lock = threading.RLock()  # the reporting thread emits; so may the run
        self._ended = False  # run_end is written or on its way: only notify_failed may follow
        self._beat_ok = True  # the last heartbeat ping went through
        self._dropped = False

    def start(self) -> None:
        """The worker, the listener and the heartbeat's `start` ping, when any is configured.
        Never fatal: whatever goes wrong is a warning, and the run goes on without them."""
        try:
            self._start()
        except Exception as exc:
            self.journal.warn(f"notifications and heartbeat off: {type(exc).__name__}: {exc}")

    def finish(self, code: int, failed: bool = False) -> None:
        """After `run_end`: the last ping (a failure for a `failed` health verdict), then a
        short wait for the outcomes (END_WAIT_S)."""
        with self._lock:
            self._ended = True
        try:
            if self._heartbeat is not None:
                self._heartbeat.finish(code, failed)
            if self._courier is not None:
                self._courier.close(END_WAIT_S)
        except Exception as exc:  # the shutdown goes on: the lock, the signals, the console
            self.journal.say(f"notifications: {type(exc).__name__}: {exc}", "WARN")

    def _start(self) -> None:
        settings = self.plan.settings
        targets = self._usable(settings.notify_targets)
        if not targets and settings.heartbeat_url is None:
            return
        from aidd.notify.courier import Courier
        from aidd.notify.heartbeat import Heartbeat

        courier = (self._make_courier or Courier)(self._env, self._on_outcome)
        try:
            courier.start()
        except OSError as exc:
            self.journal.warn(f"notifications and heartbeat off: cannot start their worker "
                              f"({exc.strerror or exc})")
            return
        self._courier = courier
        if targets:
            self._rules = Rules(targets, self.plan.paths.root.name)
            self.journal.events.listeners.append(self._on_event)
        if settings.heartbeat_url is not None:
            self._heartbeat = Heartbeat(settings.heartbeat_url, settings.heartbeat_interval,
                                        self._send)
            self._heartbeat.start()

    def _usable(self, targets: tuple[Target, ...]) -> tuple[Target, ...]:
        """Without notify-send on PATH a desktop target is one warning, then ignored."""
        if any(t.kind is TargetKind.DESKTOP for t in targets) and shutil.which(
                "notify-send", path=self._env.get("PATH")) is None:
            self.journal.warn("desktop notifications off: notify-send is not on PATH")
            return tuple(t for t in targets if t.kind is not TargetKind.DESKTOP)
        return targets

    # -- from the run's thread: an event ----------------------------------------------------------
    def _on_event(self, record: Mapping[str, Any]) -> None:
        with self._lock:  # --parallel: the slots' threads emit too; the rules keep counts
            if record.get("event") == "run_end":
                self._ended = True  # before its line is written: its notes are the last
            for target, note in self._rules.notes(record):
                self._send(job(target, note, str(self.plan.paths.root), self._host))

    def _send(self, item: Mapping[str, Any]) -> None:
        """`keep`: where the worker writes a failure nobody hears any more (aidd ended or
        died); the run's last notifications retry at once (END_RETRY_PAUSE_S), so a refused
        connection is known before aidd exits."""
        courier = self._courier
        item = {**item, "keep": {"root": str(self.plan.paths.root),
                                 "run": self.journal.events.run_id},
                **({"pause_s": END_RETRY_PAUSE_S} if self._ended else {})}
        if courier is None or courier.send(item) or self._dropped:
            return
        self._dropped = True  # said once: a full queue means an endpoint holds the worker up
        self.journal.say(f"notification dropped: {item.get('trigger')} to {item.get('shown')} "
                         "(queue full; further drops are not reported)", "WARN")

    # -- from the courier's thread: an outcome ---------------------------------------------------
    def _on_outcome(self, item: Mapping[str, Any], ok: bool, why: str | None,
                    tries: int) -> None:
        from aidd.notify.heartbeat import HEARTBEAT  # imported by `_start` already

        trigger, shown = str(item.get("trigger")), str(item.get("shown"))
        with self._lock:
            if trigger == HEARTBEAT:
                if ok or not self._beat_ok:
                    self._beat_ok = ok
                    return
                self._beat_ok = False
            elif ok:
                return
            what = shown if trigger == HEARTBEAT else f"notification {trigger} to {shown}"
            again = "; said again once a ping succeeds" if trigger == HEARTBEAT else ""
            self.journal.say(f"{what} failed: {why} (after {tries} "
                             f"{'try' if tries == 1 else 'tries'}){again}", "WARN")
            # Also after run_end: the run's last notifications fail after it (issue 28 item 8).
            self.journal.events.emit("notify_failed", target=shown, trigger=trigger,
                                     error=why, tries=tries)
