"""What one run holds open: console, events, stop watcher, signals, lock, logs (SUP-1, EXIT-6).

`begin` performs the start-up writes of SUP-1; `finish` is the one shutdown every exit path
takes: stop watching, clean the logs, `run_end`, release the lock.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from aidd import fsio
from aidd.clock import Clock
from aidd.config import Settings
from aidd.console import Console
from aidd.errors import ExitCode
from aidd.events import EventLog, make_run_id
from aidd.logs.transcript import Transcript
from aidd.project.detect import Origin, read_state, record_origin
from aidd.project.stop import StopWatcher, remove_stop, stale_stop
from aidd.prompts.select import ModelOptions
from aidd.run.outcomes import Counters, EndReason, RunExit, stopped
from aidd.run.preflight import RunPlan
from aidd.run.signals import Interrupt, install

if TYPE_CHECKING:
    from aidd.audits.definitions import AuditDefinition
    from aidd.run.supervisor import Phase, PhaseState

_NUMBERED = re.compile(r"^([0-9]+)\.")


def next_log_number(iterations: Path) -> int:
    """1 + the largest numeric prefix of any file name in iterations/ (LOG-2)."""
    highest = 0
    try:
        for entry in iterations.iterdir():
            match = _NUMBERED.match(entry.name)
            if match:
                highest = max(highest, int(match.group(1)))
    except FileNotFoundError:
        pass
    return highest + 1


@dataclass
class RunContext:
    plan: RunPlan
    clock: Clock
    console: Console
    events: EventLog
    interrupt: Interrupt = field(default_factory=Interrupt)
    counters: Counters = field(default_factory=Counters)
    transcript: Transcript | None = None
    logs_written: list[Path] = field(default_factory=list)
    post_audits_done: bool = False
    # The tree's fingerprint after the last stuck check: the next iteration starts from it
    # instead of asking git again (one process less per iteration, SUP-71).
    last_fingerprint: str | None = None
    _watcher: StopWatcher | None = None
    _restore_signals: object = None

    @classmethod
    def open(cls, plan: RunPlan, clock: Clock) -> RunContext:
        run_id = make_run_id(plan.started, os.getpid())
        return cls(plan, clock, Console(),
                   EventLog(plan.paths.events, run_id, root=plan.paths.root))

    @property
    def settings(self) -> Settings:
        return self.plan.settings

    @property
    def cli_version(self) -> str:
        return self.plan.cli_version

    def model_options(self) -> ModelOptions:
        s = self.settings
        return ModelOptions(s.model, s.init_model, s.code_model, s.audit_model)

    # -- start-up (SUP-1) --------------------------------------------------------------------
    def begin(self) -> None:
        paths = self.plan.paths
        self._restore_signals = install(self.interrupt)
        self.interrupt.on_signal = self._signal_received
        if stale_stop(paths.stop, self.plan.started) and remove_stop(paths.stop):
            self.say("removed a stale .stop request from before this run")
        fsio.remove_stale_temps(paths.root, paths.automaker)
        if not self.plan.audit_queue and read_state(paths).origin is None:
            self._record_origin()
        fsio.make_dirs(paths.root, paths.iterations)
        self.counters.next_number = next_log_number(paths.iterations)
        self._watcher = StopWatcher(paths.stop, self._stop_noticed)
        self._watcher.start()
        from aidd.run.announce import emit_run_start

        emit_run_start(self)  # the first event of the run (issue 13 item 16)
        for warning in self.plan.warnings:
            self.warn(warning)

    def _signal_received(self, name: str) -> None:
        self.events.emit("signal", name=name)

    def _record_origin(self) -> None:
        from aidd.project.scaffold import copy_scaffolding

        origin = self.plan.origin
        scaffolded: list[str] = []
        if origin is Origin.NEW:
            scaffolded = copy_scaffolding(self.plan.paths.root)
        record_origin(self.plan.paths, origin, self.clock.now(), scaffolded)

    def _stop_noticed(self) -> None:
        self.say("stop requested; finishing the current agent run")
        self.events.emit("stop_requested")

    # -- messages ------------------------------------------------------------------------
    def say(self, text: str, level: str = "") -> None:
        if self.transcript is not None:
            self.transcript.message(text, level)
        else:
            stamp = self.clock.now().strftime("%H:%M:%S")
            self.console.line(f"[aidd {stamp}] " + (f"{level} " if level else "") + text,
                              {"WARN": "warn", "ERROR": "error"}.get(level, "dim"))

    def warn(self, text: str, file: str | None = None) -> None:
        self.say(text, level="WARN")
        self.events.emit("warning", message=text, file=file)

    # -- stop and signals ----------------------------------------------------------------
    def check_stop(self) -> None:
        """Signals first (exit 124), then `.stop` (exit 6): SUP-81, SUP-90."""
        if self.interrupt.is_set():
            raise RunExit(ExitCode.TIMEOUT_OR_SIGNAL, EndReason.SIGNAL,
                          f"interrupted by {self.interrupt.name}")
        if os.path.lexists(self.plan.paths.stop):
            if self._watcher is not None:
                self._watcher.consume()
            self.say("stop: .automaker/.stop honoured; exiting with 6")
            self.events.emit("stop")
            raise stopped()

    def wait(self, seconds: float) -> None:
        """Sleep that honours `.stop` and signals within a second (SUP-52)."""
        deadline = self.clock.monotonic() + seconds
        while (left := deadline - self.clock.monotonic()) > 0:
            self.check_stop()
            self.clock.sleep(min(left, 0.25))
        self.check_stop()

    # -- shutdown (EXIT-6) ---------------------------------------------------------------
    def finish(self, code: int, reason: EndReason) -> None:
        """Close the log, clean, `run_end`; the lock is released and the signal handlers are
        restored even when a full disk makes the rest fail (REL-21)."""
        try:
            self._wind_down(code, reason)
        except OSError as exc:
            self.say(f"shutdown incomplete: {exc}", "WARN")
        finally:
            self.plan.lock.release()
            if callable(self._restore_signals):
                self._restore_signals()
            self.console.close()  # a stalled terminal holds us up at most a moment

    def _wind_down(self, code: int, reason: EndReason) -> None:
        transcript, self.transcript = self.transcript, None
        if transcript is not None:
            transcript.close()
        if self._watcher is not None:
            self._watcher.close()
        if not self.settings.no_clean:
            self._clean_logs()
        c = self.counters
        self.say(f"run ended ({reason.value}): exit {code} after {c.iterations} iterations, "
                 f"{c.failures} failed, {c.rate_limit_sleeps} rate-limit sleeps")
        self.events.emit(
            "run_end", exit_code=code, reason=reason.value, iterations=c.iterations,
            attempts=c.attempts, failures=c.failures, rate_limit_sleeps=c.rate_limit_sleeps,
            paused_s=round(c.paused_s, 3),
            duration_s=round((self.clock.now() - self.plan.started).total_seconds(), 3),
            tokens=c.tokens or None, cost_usd=c.cost_usd,
        )

    def _clean_logs(self) -> None:
        from aidd.logs.cleaning import clean_log

        for log in self.logs_written:
            if log.exists():
                warning = clean_log(log)
                if warning:
                    self.warn(warning, file=str(log))

    def report_crash(self, exc: BaseException) -> Path:
        text = "".join(traceback.format_exception(exc))
        if self.transcript is not None:
            try:
                self.transcript.message(f"internal error: {exc!r}", level="ERROR")
                self.transcript.message(text.rstrip(), level="ERROR")
                return self.transcript.path
            except OSError:  # the log itself failed (disk full, REL-21): use a crash file
                pass
        path = fsio.write_crash_file(self.plan.paths.root, text)
        if path is None:  # nowhere to write it (disk full): the user gets the traceback itself
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write(text)
            return Path("standard error (above)")
        return path

    # -- project facts used between phases ----------------------------------------------
    def project_complete(self) -> bool:
        from aidd.project.completion import evaluate

        return evaluate(self.plan.paths, self.plan.feature_filter).complete

    def unfixed_findings(self) -> int:
        from aidd.project.completion import unfixed_findings

        return unfixed_findings(self.plan.paths)

    def check_between_phases(self) -> None:
        self.check_stop()

    # -- audit phases (AUD-22, AUD-23) ---------------------------------------------------
    def reports_snapshot(self, phase: Phase) -> dict[str, tuple[int, int]]:
        if phase.audit is None:
            return {}
        from aidd.audits.definitions import report_snapshot

        return report_snapshot(self.plan.paths)

    def findings_snapshot(self, phase: Phase) -> dict[str, int]:
        if phase.audit is None:
            return {}
        from aidd.audits.findings import snapshot

        return snapshot(self.plan.paths, _audit(phase).finding_prefix)

    def record_findings(self, phase: Phase, state: PhaseState) -> None:
        from aidd.audits.findings import check_findings

        audit = _audit(phase)
        report = check_findings(self.plan.paths, audit.name, audit.finding_prefix,
                                state.findings_before)
        state.invalid_findings = report.invalid
        level = "WARN" if report.invalid else ""
        self.say(f"{report.new} new findings, {report.changed} changed, "
                 f"{len(report.invalid)} invalid", level=level)
        for finding in report.invalid:
            self.say(f"invalid finding {finding.path}: " + "; ".join(finding.errors), "WARN")
        self.events.emit("audit_findings", audit=audit.name, new=report.new,
                         changed=report.changed,
                         invalid=[{"path": f.path, "errors": list(f.errors)}
                                  for f in report.invalid])

    def audit_report(self, phase: Phase, state: PhaseState) -> str | None:
        """AUD-22: a report for this audit written in this phase and no invalid finding."""
        from aidd.audits.definitions import report_written

        if state.invalid_findings:
            return None
        report = report_written(self.plan.paths, _audit(phase).name, state.reports_before)
        return self.plan.paths.rel(report) if report is not None else None


def _audit(phase: Phase) -> AuditDefinition:
    from aidd.audits.definitions import AuditDefinition

    assert isinstance(phase.audit, AuditDefinition)
    return phase.audit


