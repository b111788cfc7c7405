"""One attempt: launch the agent CLI, watch its output and silence, nudge it, end it, and
classify what happened (SUP-10..43, ADP-20..39). Nothing here is specific to one CLI."""

from __future__ import annotations

import signal
from collections.abc import Callable, Collection
from datetime import UTC
from typing import Any

from aidd import __version__
from aidd.agents.base import AgentContext, NudgeMethod, Signals
from aidd.agents.ratelimit import wake_time
from aidd.errors import AgentCliError
from aidd.session import orphans, proctree
from aidd.session.cliproc import find_conversation, holds_task
from aidd.session.idle import IdleAction, IdleMonitor, IdlePolicy, seconds_text
from aidd.session.liveness import Probe, State, Vitals
from aidd.session.nudge import Nudger
from aidd.session.outcome import EndCause, Outcome, Reason, SessionOutcome, classify
from aidd.session.output import OutputPump
from aidd.session.pty import AgentProcess
from aidd.session.request import AttemptRequest
from aidd.session.stream import StreamRouter

_KILL_REASONS = {
    EndCause.IDLE: "idle",
    EndCause.HUNG: "hung",
    EndCause.WALL: "timeout",
    EndCause.LINGER: "linger",
    EndCause.SIGNAL: "signal",
    EndCause.BUDGET: "budget",
}


def run_attempt(request: AttemptRequest) -> SessionOutcome:
    """Run the agent once; returns when it and every process it started are gone."""
    proctree.enable_subreaper()
    let_next = request.start_turn() if request.start_turn is not None else None
    try:
        return _Attempt(request, let_next).run()
    finally:
        if let_next is not None:
            let_next()


class _Attempt:
    def __init__(self, request: AttemptRequest,
                 let_next: Callable[[], None] | None = None) -> None:
        self.req = request
        self.let_next = let_next  # the next slot's agent may start once this one speaks
        self.adapter = request.adapter
        self.clock = request.clock
        self.zone = request.zone or request.clock.now().tzinfo or UTC
        self.parser = self.adapter.new_parser(self.zone)
        self.router = StreamRouter(request.transcript, self.parser)
        self.output = OutputPump(self.router, self._on_output, self.clock, request.interrupt)
        self.policy = IdlePolicy(request.idle_nudge_s, request.idle_timeout_s,
                                 request.max_nudges)
        self.started = self.clock.monotonic()
        self.started_epoch_s = self.clock.now().timestamp()
        self.idle = IdleMonitor(self.policy, self.started)
        self.wall_at = self.started + request.timeout_s if request.timeout_s > 0 else None
        self.linger_at: float | None = None
        self.tools_at_linger = 0  # tool calls seen when the linger began
        self.turns_seen = 0
        self.nudger = Nudger(self.adapter, request.nudge_text, request.events, request.number,
                             prompt=request.prompt)
        self.launches = 0
        self.exit_status: int | None = None
        self.env = self.adapter.environment(orphans.child_environment(request.env), AgentContext(
            request.project_dir, request.number, request.prompt_kind, request.audit_name,
            __version__))
        self.scope = proctree.TreeScope(
            self._marked, lambda: orphans.other_attempts(self.env, request.number))
        self.liveness = self._liveness() if request.liveness == "signals" else None
        self.proc = self._spawn(self.adapter.argv(request.binary, request.model),
                                self.adapter.encode_prompt(request.prompt))

    # -- the loop --------------------------------------------------------------------------
    def run(self) -> SessionOutcome:
        try:
            cause = self._supervise()
        except BaseException:
            self._abandon()
            raise
        finally:
            self.proc.close()
        return self._outcome(cause)

    def _supervise(self) -> EndCause:
        while True:
            if self._interrupted():
                self.say(f"interrupted by {self._signal_name()}; killing the agent tree",
                         "WARN")
                self._kill(EndCause.SIGNAL)
                return EndCause.SIGNAL
            status = self.proc.poll()
            if status is not None:
                self.exit_status = status
                self._drain()
                self._leftovers()
                return EndCause.EXITED
            now = self.clock.monotonic()
            cause = self._due(now)
            if cause is not None:
                self._kill(cause)
                return cause
            self._pump(self._timeout(now))

    def _due(self, now: float) -> EndCause | None:
        if self.req.deadline_s is not None and now >= self.req.deadline_s:
            self.say("--max-wall-time reached; stopping the agent", "WARN")
            return EndCause.BUDGET
        if self.wall_at is not None and now >= self.wall_at:
            self.say(f"wall-clock limit {seconds_text(self.req.timeout_s)} reached", "WARN")
            return EndCause.WALL
        if self.linger_at is not None and now >= self.linger_at:
            self.say("agent lingered after its final event", "WARN")
            return EndCause.LINGER
        idle_due = self.idle.due()
        deciding = idle_due is not None and now >= idle_due
        if self.liveness is not None and self.liveness.tick(now, fresh=deciding) is State.BUSY:
            self.idle.busy(now)  # busy is not silence (issue 17)
        files = self.req.file_activity
        if self.nudger.worked(self.parser.signals.tool_calls, files() if files else None):
            self.idle.work()
        action = self.idle.poll(now)
        if action is IdleAction.NUDGE and self.linger_at is None:
            self.nudger.nudge(self, self.idle.silence(now), self.liveness)
        elif action in (IdleAction.KILL, IdleAction.HUNG):
            return self._idle_end(action, now)
        return None

    def _idle_end(self, action: IdleAction, now: float) -> EndCause:
        state = f" [{self.liveness.label()}]" if self.liveness is not None else ""
        if action is IdleAction.KILL:
            silence = seconds_text(self.idle.silence(now))
            self.say(f"no output for {silence}; killing the agent tree{state}", "WARN")
            return EndCause.IDLE
        count = self.idle.unanswered
        self.say(f"{count} nudge{'s' * (count != 1)} answered by no work (no tool call, no file "
                 f"change): the agent counts as hung (--max-nudges); killing the agent "
                 f"tree{state}", "WARN")
        return EndCause.HUNG

    def _liveness(self) -> Vitals:
        signals, files = self.parser.signals, self.req.file_activity
        probe = Probe(cpu_s=lambda: self.scope.cpu_s(self.proc.pid),
                      files_at=files or (lambda: None),
                      tool_open=lambda: bool(signals.open_tools),
                      conversation=lambda: signals.json_seen,
                      lingering=lambda: self.linger_at is not None)
        return Vitals(probe, self.started, self.req.busy_timeout_s, self._report)

    def _report(self, state: State, since_s: float) -> None:
        self.req.events.emit("liveness", number=self.req.number, state=state.value,
                             since_s=since_s, why=self.liveness.why if self.liveness else "")

    def _timeout(self, now: float) -> float:
        due = (self.idle.due(), self.wall_at, self.linger_at, self.req.deadline_s,
               self.liveness.due() if self.liveness is not None else None)
        deadlines = [d for d in due if d is not None]
        cap = 5.0
        if self.proc.pidfd < 0:
            cap = min(cap, 0.1)  # no pidfd: notice the exit by polling
        return max(0.0, min([cap, *(d - now for d in deadlines)]))

    def _on_output(self, data: bytes) -> None:
        if self.let_next is not None:
            self.let_next()
            self.let_next = None
        now = self.clock.monotonic()
        progress = self.parser.signals.progress
        self.router.feed(data)
        if self.nudger.is_answer(self.parser.signals.progress > progress):
            self.idle.activity(now)
            if self.liveness is not None:
                self.liveness.output(now)
        # A tool call after a terminal event is work: opencode and kilo go on after an error
        # event, e.g. once they compacted an overflowing conversation (issue 32).
        tools = self.parser.signals.tool_calls
        if self.linger_at is not None and (self.adapter.output_cancels_linger
                                           or tools > self.tools_at_linger):
            self.linger_at = None
        while self.turns_seen < self.parser.signals.turns_ended:
            self.turns_seen += 1
            self._turn_ended(now)

    def _turn_ended(self, now: float) -> None:
        """A terminal event (ADP-39); claude's stdin closes unless a nudge awaits its answer."""
        if self.adapter.nudge_method is NudgeMethod.STDIN:
            if self.nudger.answered_turn():
                return
            self.proc.stdin.close()  # ADP-31: the CLI then exits
        if self.linger_at is None:
            self.linger_at = now + self.policy.linger_grace(self.req.linger_cap_s)
            self.tools_at_linger = self.parser.signals.tool_calls

    # -- what a nudge asks of the attempt (nudge.Nudged) -------------------------------------
    @property
    def signals(self) -> Signals:
        return self.parser.signals

    def write_stdin(self, data: bytes) -> bool:
        return self.proc.stdin.send(data)

    def ask_conversation(self) -> str | None:
        """Only a conversation the running process may have started: not an earlier one."""
        return find_conversation(self.adapter, self.req.binary, self.req.project_dir, self.env,
                                 self.started_epoch_s, clock=self.clock)

    def holds_task(self, conversation: str) -> bool | None:
        return holds_task(self.adapter, self.req.binary, self.req.project_dir, self.env,
                          conversation, clock=self.clock)

    def interrupt_agent(self) -> bool:
        self.proc.signal_group(signal.SIGINT)
        self._wait_exit(self.req.kill_grace_s)
        if self._interrupted():
            return False
        self._kill_tree("nudge", only_if_alive=True)
        self._drain()
        return True

    def relaunch(self, conversation: str | None, message: bytes) -> None:
        self.turns_seen = self.parser.signals.turns_ended
        self.linger_at = None
        old = self.proc
        binary, model = self.req.binary, self.req.model
        argv = (self.adapter.relaunch_argv(binary, model, conversation) if conversation
                else self.adapter.argv(binary, model))
        self.started_epoch_s = self.clock.now().timestamp()  # a new conversation is newer
        self.proc = self._spawn(argv, message)
        old.close()

    # -- endings ---------------------------------------------------------------------------
    def _kill(self, cause: EndCause) -> None:
        if self.req.before_kill is not None:
            self.req.before_kill()
        self._kill_tree(_KILL_REASONS[cause])
        self.exit_status = self.proc.poll()
        self._drain()

    def _kill_tree(self, reason: str, *, only_if_alive: bool = False) -> None:
        proc = self.proc
        report = self._terminate(lambda: self.scope.snapshot(proc.pid),
                                 proctree.Root(proc.pid, lambda: proc.poll() is None))
        if only_if_alive and not report.procs:
            return
        self._wait_exit(1.0)
        names = proctree.listed(report.procs, lambda p: p.label()) or "nothing left"
        suffix = "; SIGKILL needed" if report.escalated else ""
        self.say(f"killed the agent tree ({reason}): {names}{suffix}", "WARN")
        self.req.events.emit(
            "kill", number=self.req.number, reason=reason,
            pids=[{"pid": p.pid, "name": p.name} for p in report.procs],
            escalated=report.escalated, unanswered_nudges=self.idle.unanswered)

    def _leftovers(self) -> None:
        """Descendants still running after a normal exit (SUP-42)."""
        if self.scope.surely_empty():
            return  # the common case, without a look at every process (issue 33)
        root = self.proc.pid

        def scan() -> list[Any]:  # the agent is gone and reaped: never signal its pid
            return [p for p in self.scope.snapshot(root) if p.pid != root]

        if self.req.keep_children:
            infos = proctree.describe(scan())
        else:
            infos = self._terminate(scan, proctree.Root(root, lambda: False)).procs
        if not infos:
            return
        named = proctree.listed(infos, lambda i: f"{i.label()} ({i.cmd})")
        if self.req.keep_children:
            self.say(f"left running by the agent (--keep-children): {named}")
        else:
            self.say(f"killed what the agent left running: {named}", "WARN")
            self._drain()
        pids = [{"pid": i.pid, "name": i.name, "cmd": i.cmd} for i in infos]
        self.req.events.emit("children_reaped", number=self.req.number, pids=pids,
                             kept=self.req.keep_children)

    def _marked(self, among: Collection[int] | None) -> list[int]:
        """Processes (of `among`, by default all) carrying this run's mark and this attempt's
        number, wherever they went (REL-1); kept leftovers of earlier attempts
        (--keep-children) carry another number."""
        return orphans.of_attempt(self.env, self.req.number, among)

    def _terminate(self, scan: proctree.Scan, root: proctree.Root) -> proctree.KillReport:
        """Freeze, SIGTERM, the grace (none once a second signal came), then SIGKILL until
        nothing is left (SUP-40); the agent's output is read meanwhile."""
        return proctree.terminate(
            scan, root=root, grace_s=0.0 if self._urgent() else self.req.kill_grace_s,
            clock=self.clock, pump=self._pump, hurry=self._urgent)

    def _wait_exit(self, limit_s: float) -> None:
        deadline = self.clock.monotonic() + limit_s
        while (self.proc.poll() is None and self.clock.monotonic() < deadline
               and not self._interrupted()):
            self._pump(min(0.05, max(0.0, deadline - self.clock.monotonic())))

    def _abandon(self) -> None:
        """An unexpected error: kill the tree at once, ignoring further trouble."""
        try:
            proc = self.proc
            proctree.terminate(
                lambda: self.scope.snapshot(proc.pid), grace_s=0.0, clock=self.clock,
                root=proctree.Root(proc.pid, lambda: proc.poll() is None), hurry=lambda: True)
        except Exception:  # already failing; the original error matters more
            pass

    # -- helpers ---------------------------------------------------------------------------
    def _pump(self, timeout_s: float) -> int:
        return self.output.pump(self.proc, timeout_s)

    def _drain(self) -> None:
        self.output.drain(self.proc, self.req.drain_quiet_s)

    def _spawn(self, argv: list[str], stdin_data: bytes) -> AgentProcess:
        try:
            proc = AgentProcess(argv, self.req.project_dir, self.env)
        except OSError as err:
            raise AgentCliError(f"cannot start {argv[0]}: {err.strerror or err}") from err
        self.launches += 1
        proc.stdin.send(stdin_data)
        if self.adapter.nudge_method is not NudgeMethod.STDIN:
            proc.stdin.close()  # opencode/kilo read stdin to EOF before they start (ADP-21)
        return proc

    def _urgent(self) -> bool:
        interrupt = self.req.interrupt
        return interrupt is not None and interrupt.is_set() and interrupt.urgent

    def _signal_name(self) -> str:
        interrupt = self.req.interrupt
        return (interrupt.name if interrupt else None) or "a signal"

    def _interrupted(self) -> bool:
        interrupt = self.req.interrupt
        return interrupt is not None and interrupt.is_set()

    def say(self, text: str, level: str = "") -> None:
        self.req.transcript.message(text, level)

    def _outcome(self, cause: EndCause) -> SessionOutcome:
        signals = self.parser.signals
        verdict = classify(cause, self.exit_status, signals,
                           exit1_success=self.adapter.exit1_success)
        if verdict.reason is Reason.EXIT1_SUCCESS:
            self.say("exit 1 treated as success")
        wake = None
        if verdict.outcome is Outcome.RATE_LIMITED:
            wake = wake_time(signals.rate_limit, self.clock.now(), self.zone,
                             self.req.rate_limit_buffer_s, self.req.rate_limit_fallback_s)
        interrupt = self.req.interrupt
        return SessionOutcome(
            result=int(verdict.result), outcome=verdict.outcome, reason=verdict.reason,
            exit_status=self.exit_status,
            duration_s=round(self.clock.monotonic() - self.started, 3),
            bytes_out=self.router.bytes, conversation_id=signals.conversation_id,
            tokens=signals.tokens.as_dict() if signals.tokens else None,
            cost_usd=signals.cost_usd, wake=wake,
            message=signals.error.message if signals.error else None,
            interrupted_by=interrupt.name if cause is EndCause.SIGNAL and interrupt else None,
            nudges=self.nudger.count, launches=self.launches, killed=_KILL_REASONS.get(cause),
            tool_calls=signals.tool_calls if signals.json_seen else None,
            assistant_chars=signals.assistant_chars, model=signals.model,
            quota=tuple(signals.quota.values()),
            refused=tuple(signals.refused.items()))
