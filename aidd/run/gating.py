"""A run's validation gate (issue 15): the baseline before the first attempt, the gate after
each successful attempt, judged against the baseline; what a red gate means for features the
attempt set passing, for completion and for the next prompt."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from aidd.clock import Clock
from aidd.gate.runner import CommandRun, GateRequest, run_gate
from aidd.run.journal import Journal
from aidd.run.preflight import RunPlan

# The verdict and the passing features are read only when a gate is configured: a plain run
# imports neither (issue 33), so each use imports its own.
if TYPE_CHECKING:
    from aidd.gate.verdict import CommandVerdict, GateVerdict

RunGate = Callable[[GateRequest], tuple[CommandRun, ...]]
_NAMED = 5  # failures or features named on one console line


class Gatekeeper:
    def __init__(self, plan: RunPlan, journal: Journal, clock: Clock,
                 cancelled: Callable[[], bool], run: RunGate = run_gate) -> None:
        self.plan = plan
        self.journal = journal
        self.clock = clock
        self.enabled = bool(plan.settings.gate)
        self._cancelled = cancelled
        self._run = run
        self._baseline: dict[str, CommandRun] | None = None
        self._before: frozenset[str] = frozenset()  # feature files passing before the attempt
        self.latest: GateVerdict | None = None  # the newest verdict, after the baseline
        self._last_attempt: int | None = None  # the newest attempt the gate should cover

    @property
    def report(self) -> str:
        """The red gate's summary for the next prompt; empty while it is green."""
        latest = self.latest
        return latest.summary() if latest is not None and latest.red else ""

    def new_failures(self, number: int) -> tuple[str, ...]:
        """What the gate found newly failing after attempt `number`; none when it did not run."""
        latest = self.latest
        if latest is None or latest.number != number:
            return ()
        return latest.new_failures

    # -- around an attempt -----------------------------------------------------------------
    def before_attempt(self, number: int) -> None:
        """The baseline before the run's first attempt; the features passing now."""
        if not self.enabled:
            return
        if self._baseline is None:
            self._run_baseline(number)
        from aidd.gate import passes

        self._before = passes.passing(self.plan.paths)

    def after_attempt(self, number: int, success: bool) -> bool:
        """Run the gate after a successful attempt; True when it ran (it may have written
        files in the project: test reports, caches)."""
        if not self.enabled:
            return False
        self._last_attempt = number
        if not success or self._cancelled():
            return False
        verdict = self._check(number)
        if verdict.red and verdict.complete:
            self._passed_under_red(verdict)
        return True

    def merged(self, number: int) -> str:
        """--parallel: the gate on a merge in the project's checkout, against the baseline
        (docs/parallel.md): "" when green (no new failure, or no gate), else why not. Cut
        short by a stop, it judged nothing: never green."""
        if not self.enabled:
            return ""
        self._last_attempt = number
        verdict = self._check(number)
        if verdict.red:
            return "the gate on the merged result is red"
        return "" if verdict.complete else "the gate on the merged result was stopped"

    def in_worktree(self, number: int, root: Path, journal: Journal) -> GateVerdict | None:
        """--parallel: the gate in a slot's worktree once its feature says done, against the
        run's baseline, before its branch may enter the queue (docs/parallel.md); None without
        a gate. On the slot's thread: the project's verdict (`latest`) is left alone."""
        if not self.enabled:
            return None
        return self._judged(number, root, journal)

    def holds_completion(self) -> bool:
        """Completion needs a gate without new failures over the newest work: the gate runs
        again when an attempt ran since it last did."""
        if not self.enabled or self._last_attempt is None:
            return False  # no agent ran in this run: the tree is the baseline's
        latest = self.latest
        if latest is None or latest.number != self._last_attempt or not latest.complete:
            latest = self._check(self._last_attempt)
        if latest.red:
            self.journal.say(f"completion held back: the gate has new failures "
                             f"({_failures(latest)})", level="WARN")
        return latest.red

    # -- running -----------------------------------------------------------------------------
    def _request(self, number: int, suffix: str, root: Path | None = None) -> GateRequest:
        plan = self.plan
        return GateRequest(plan.settings.gate, root or plan.paths.root, plan.settings.environ,
                           plan.paths.log(number, suffix), self.clock, self._cancelled,
                           plan.paths.root)

    def _run_baseline(self, number: int) -> None:
        start = self.clock.monotonic()
        self.journal.say("gate: running the baseline (failures found now will not block)")
        runs = self._run(self._request(number, ".gate-baseline.log"))
        from aidd.gate.verdict import baseline_of

        self._baseline = baseline_of(runs)
        for run in runs:
            state = "ok" if run.ok else (_count(len(run.failing), "failing test")
                                         if run.failing else run.why)
            self.journal.say(f"gate baseline: {run.command.name}: {state} "
                             f"({run.duration_s:.1f}s)")
        self.journal.events.emit(
            "gate_baseline", number=number,
            commands=[{"name": r.command.name, "ok": r.ok, "exit": r.exit,
                       "failures": len(r.failing or ()), "timed_out": r.timed_out,
                       "duration_s": round(r.duration_s, 3)} for r in runs],
            duration_s=round(self.clock.monotonic() - start, 3))

    def _check(self, number: int) -> GateVerdict:
        """The gate in the project's checkout: the run's verdict."""
        self.latest = self._judged(number, self.plan.paths.root, self.journal)
        return self.latest

    def _judged(self, number: int, root: Path, journal: Journal) -> GateVerdict:
        runs = self._run(self._request(number, ".gate.log", root))
        from aidd.gate.verdict import judge

        verdict = judge(number, runs, self._baseline or {})
        log = self.plan.paths.rel(self.plan.paths.log(number, ".gate.log"))
        for cv in verdict.commands:
            _tell(journal, number, cv, log)
        return verdict

    def _passed_under_red(self, verdict: GateVerdict) -> None:
        """Features this attempt set passing while its gate is red: said, and with
        gate-revert-passes set back to `passes: false` with a note."""
        from aidd.gate import passes

        paths = self.plan.paths
        newly = sorted(passes.passing(paths) - self._before)
        if not newly:
            return
        names = [passes.name(paths, location) for location in newly]
        self.journal.say(f"attempt {verdict.number:03d} set passes on {_names(names)} while "
                         "the gate is red", level="WARN")
        reverted: list[str] = []
        if self.plan.settings.gate_revert_passes:
            note = (f"{_today(self.clock.now())} aidd: set back to passes: false: attempt "
                    f"{verdict.number:03d} left the validation gate red ({_failures(verdict)})")
            reverted = [passes.name(paths, location)
                        for location in passes.revert(paths, newly, note)]
            if reverted:
                self.journal.say(f"set back to passes: false (gate-revert-passes): "
                                 f"{_names(reverted)}", level="WARN")
        self.journal.events.emit("gate_passes", number=verdict.number, features=names,
                                 reverted=reverted)


def _tell(journal: Journal, number: int, cv: CommandVerdict, log: str) -> None:
    """One command's verdict: its `gate` event and its console line."""
    run = cv.run
    journal.events.emit(
        "gate", number=number, name=run.command.name, ok=run.ok, exit=run.exit,
        duration_s=round(run.duration_s, 3), new_failures=len(cv.new_failures),
        known_failures=len(cv.known_failures), new=list(cv.new_failures[:20]),
        timed_out=run.timed_out, log=log)
    if run.junit_problem:
        journal.warn(f"gate {run.command.name}: JUnit report unusable "
                     f"({run.junit_problem}); judged by its exit status")
    if cv.new_failures:
        journal.say(f"gate red: {run.command.name}: "
                    f"{_count(len(cv.new_failures), 'new failure')} "
                    f"({_names(cv.new_failures)}) ({run.duration_s:.1f}s); "
                    f"output in {log}", level="WARN")
    elif run.cancelled:
        journal.say(f"gate: {run.command.name} stopped (a stop was requested)")
    else:
        known = (f", {_count(len(cv.known_failures), 'known failure')}"
                 if cv.known_failures else "")
        journal.say(f"gate: {run.command.name}: no new failures{known} "
                    f"({run.duration_s:.1f}s)")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _names(items: list[str] | tuple[str, ...]) -> str:
    shown = ", ".join(items[:_NAMED])
    return shown + (f" and {len(items) - _NAMED} more" if len(items) > _NAMED else "")


def _failures(verdict: GateVerdict) -> str:
    return _names(verdict.new_failures)


def _today(now: datetime) -> str:
    return now.date().isoformat()
