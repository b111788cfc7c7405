"""A run's start and end, and the two ways to ask it to stop (a signal, `.automaker/.stop`).

`begin` makes the start-up writes (SUP-1); `finish` is the one shutdown every ending takes:
stop watching, clean the logs, the run's health verdict, `run_end`, release the lock (EXIT-6).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from aidd import fsio
from aidd.clock import Clock
from aidd.errors import ExitCode
from aidd.logs.cleaning import clean_log
from aidd.project.activity import FileActivity
from aidd.project.detect import Origin, read_state, record_origin
from aidd.project.featureguard import FeatureGuard
from aidd.project.scaffold import copy_scaffolding
from aidd.project.stop import StopWatcher, remove_stop, stale_stop
from aidd.reports.health import Context, Health, Verdict
from aidd.reports.running import LiveRun
from aidd.reports.status import StatusFile, features_left
from aidd.run.alarms import Alarms
from aidd.run.header import emit_run_start
from aidd.run.journal import Journal
from aidd.run.outcomes import STOPPED, Counters, EndReason, RunEnd, format_cost
from aidd.run.preflight import RunPlan
from aidd.run.signals import Interrupt, install

_NUMBERED = re.compile(r"^([0-9]+)\.")


def next_log_number(iterations: Path) -> int:
    """1 + the largest number starting a file name in iterations/, so a new run never reuses
    an earlier run's log number (LOG-2)."""
    highest = 0
    try:
        for entry in iterations.iterdir():
            if match := _NUMBERED.match(entry.name):
                highest = max(highest, int(match.group(1)))
    except FileNotFoundError:
        pass
    return highest + 1


class Lifecycle:
    def __init__(self, plan: RunPlan, journal: Journal, clock: Clock) -> None:
        self.plan = plan
        self.journal = journal
        self.clock = clock
        self.interrupt = Interrupt()
        self._watcher: StopWatcher | None = None
        self.files: FileActivity | None = None  # --liveness signals: the project's changes
        # Feature files' versions during an attempt: a board edit the agent wrote over comes
        # back (issue 31 item 7). Told by `files` when it runs, else by a watch of .automaker/
        # alone (each watch costs threads: one is enough).
        self.guard = FeatureGuard(plan.paths)
        self._guard_watch: FileActivity | None = None
        self._restore_signals: Callable[[], None] | None = None
        self.deadline_s: float | None = None  # --max-wall-time (monotonic): no wait goes past it
        self.alarms = Alarms(plan, journal)
        # The run's events added up as they are emitted: its health verdict, its status.md.
        self.live = LiveRun(journal.events.run_id, os.getpid(),
                            plan.started.isoformat(timespec="seconds"), plan.last_iteration)
        self.status_file = StatusFile(plan.paths)  # status.md, rewritten before each attempt

    # -- start-up --------------------------------------------------------------------------
    def begin(self) -> int:
        """Signals, a stale `.stop`, the project's origin, the stop watcher, `run_start`;
        returns the number of the first attempt log."""
        paths, journal = self.plan.paths, self.journal
        self._restore_signals = install(self.interrupt)
        self.interrupt.on_signal = self._signal_received
        if stale_stop(paths.stop, self.plan.started) and remove_stop(paths.stop):
            journal.say("removed a stale .stop request from before this run")
        fsio.remove_stale_temps(paths.root, paths.automaker)
        if not self.plan.audit_queue and read_state(paths).origin is None:
            self._record_origin()
        fsio.make_dirs(paths.root, paths.iterations)
        first = next_log_number(paths.iterations)
        self._watcher = StopWatcher(paths.stop, self._stop_noticed)
        self._watcher.start()
        if self.plan.settings.liveness == "signals":
            self.files = FileActivity(paths.root, self.clock.monotonic, self.guard.noticed)
            self.files.start()
        else:
            self._guard_watch = FileActivity(paths.automaker, self.clock.monotonic,
                                             self.guard.noticed, project=paths.root)
            self._guard_watch.start()
        journal.events.listeners.append(self.live.add)
        emit_run_start(self.plan, journal)  # the run's first event (issue 13 item 16)
        for warning in self.plan.warnings:
            journal.warn(warning)
        self.alarms.start()
        return first

    def _signal_received(self, name: str) -> None:
        self.journal.events.emit("signal", name=name)

    def _record_origin(self) -> None:
        """A new project gets the scaffolding; either way its origin is written down once, so
        later runs know whether it began from a spec or from existing code (LAY-16)."""
        origin = self.plan.origin
        scaffolded = copy_scaffolding(self.plan.paths.root) if origin is Origin.NEW else []
        record_origin(self.plan.paths, origin, self.clock.now(), scaffolded)

    def _stop_noticed(self) -> None:
        """From the watcher's thread: say so at once; the loop acts after the attempt."""
        self.journal.say("stop requested; finishing the current agent run")
        self.journal.events.emit("stop_requested")

    # -- stop requests ---------------------------------------------------------------------
    def stop_requested(self) -> RunEnd | None:
        """A signal ends the run with 124, `.stop` with 6; a signal wins (SUP-81, SUP-90)."""
        if self.interrupt.is_set():
            return RunEnd(ExitCode.TIMEOUT_OR_SIGNAL, EndReason.SIGNAL,
                          f"interrupted by {self.interrupt.name}")
        if not os.path.lexists(self.plan.paths.stop):
            return None
        if self._watcher is not None:
            self._watcher.consume()
        self.journal.say("stop: .automaker/.stop honoured; exiting with 6")
        self.journal.events.emit("stop")
        return STOPPED

    def wait(self, seconds: float) -> RunEnd | None:
        """Sleep, yet answer a signal or `.stop` within a quarter second (SUP-52); the run's
        wall-time budget cuts it short (the budget check that follows ends the run)."""
        deadline = self.clock.monotonic() + seconds
        if self.deadline_s is not None:
            deadline = min(deadline, self.deadline_s)
        while (left := deadline - self.clock.monotonic()) > 0:
            if (end := self.stop_requested()) is not None:
                return end
            self.clock.sleep(min(left, 0.25))
        return self.stop_requested()

    # -- shutdown --------------------------------------------------------------------------
    def finish(self, end: RunEnd, counters: Counters) -> int:
        """Close the log, clean, `run_end`; the lock is released and the signal handlers are
        restored even when a full disk makes the rest fail (REL-21). Returns the exit code:
        the end's, or RUN_FAILED under --strict-exit for a failed run that would exit 0."""
        code, failed = end.code, False
        try:
            health = self.health(end)
            failed = health.verdict is Verdict.FAILED
            if failed and self.plan.settings.strict_exit and code == ExitCode.SUCCESS:
                code = int(ExitCode.RUN_FAILED)
            self._wind_down(end, code, health, counters)
        except OSError as exc:
            self.journal.say(f"shutdown incomplete: {exc}", "WARN")
        finally:
            # After run_end, with aidd's signal handlers still on (a ^C cannot cut it short);
            # a dead endpoint costs at most 0.5 s here, and it never raises.
            self.alarms.finish(code, failed=failed)
            self.plan.lock.release()
            if self._restore_signals is not None:
                self._restore_signals()
            self.journal.console.close()  # a stalled terminal holds us up at most a moment
        return code

    def health(self, end: RunEnd) -> Health:
        """The verdict on the run's events so far and its end; the features left are counted
        from the files (a project without them, or unreadable ones, has none counted)."""
        try:
            left = features_left(self.plan.paths, self.plan.feature_filter)
        except Exception:  # project files, untrusted: the verdict goes on without them
            left = None
        self.live.add({"event": "run_end", "run": self.journal.events.run_id,
                       "reason": end.reason.value, "exit_code": end.code})
        return self.live.verdict(self.plan.paths.root, Context(features=left))

    def _wind_down(self, end: RunEnd, code: int, health: Health, c: Counters) -> None:
        journal = self.journal
        journal.close_log()
        if self._watcher is not None:
            self._watcher.close()
        for watch in (self.files, self._guard_watch):
            if watch is not None:
                watch.close()
        self.status_file.close()
        if not self.plan.settings.no_clean:
            self._clean_logs()
        cost = f", cost {format_cost(c.cost_usd, c.cost_estimated)}" if c.cost_usd else ""
        for number, reason in enumerate(health.reasons, 1):
            journal.say(f"health {number}. {reason.what}; next: {reason.next}",
                        "" if health.verdict is Verdict.OK else "WARN")
        journal.say(f"run ended ({end.reason.value}): exit {code} after {c.iterations} "
                    f"iterations, {c.failures} failed, {c.rate_limit_sleeps} rate-limit "
                    f"sleeps{cost} — health: {health.line}",
                    "ERROR" if health.verdict is Verdict.FAILED else "")
        journal.events.emit(
            "run_end", exit_code=code, reason=end.reason.value, iterations=c.iterations,
            attempts=c.attempts, failures=c.failures, rate_limit_sleeps=c.rate_limit_sleeps,
            paused_s=round(c.paused_s, 3),
            duration_s=round((self.clock.now() - self.plan.started).total_seconds(), 3),
            tokens=c.tokens or None, cost_usd=c.cost_usd, cost_estimated=c.cost_estimated,
            health=health.to_json(),
        )

    def _clean_logs(self) -> None:
        for log in self.journal.logs_written:
            if log.exists():
                warning = clean_log(log, root=self.plan.paths.root)
                if warning:
                    self.journal.warn(warning, file=str(log))
