"""`--parallel N` (docs/parallel.md): up to N features at once, each worked by its own agent in
its own worktree (a slot, on its own thread), merged through the queue. The main thread is the
coordinator: it schedules, numbers, counts, spends the budget, sleeps on a rate limit and
merges; a slot's thread only runs one attempt at a time (`IterationRunner`), then commits it on
its branch and runs the gate in its worktree, so what the run shares (counters, budget, memory,
the project's checkout) is touched by one thread."""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from aidd.clock import Clock
from aidd.gate.verdict import GateVerdict
from aidd.project import boardmarks, featurestate
from aidd.project.activity import FileActivity
from aidd.project.checkpoints import CheckpointStore
from aidd.project.features import FeatureFile, load_features, load_file
from aidd.project.paths import ProjectPaths
from aidd.project.schedule import Busy, next_features
from aidd.project.worktrees import Worktree, WorktreeError, Worktrees
from aidd.prompts.context import ParallelInfo
from aidd.run import decisions
from aidd.run.budgeting import BudgetKeeper
from aidd.run.circular import CircularFixes
from aidd.run.gating import Gatekeeper
from aidd.run.iteration import Attempt, IterationRunner, RunAttempt
from aidd.run.journal import Journal
from aidd.run.lastattempt import AttemptMemory, Work, merge_refused, summarise, work_of
from aidd.run.lifecycle import Lifecycle
from aidd.run.mergequeue import Finished, MergeQueue, MergeReport
from aidd.run.outcomes import STOPPED, Counters, RunEnd
from aidd.run.phases import PhaseEnd, PhaseState
from aidd.run.preflight import RunPlan

End = PhaseEnd | RunEnd
TURN_S = 10.0  # the longest one agent's start holds back the next's


class StartTurns:
    """Agents start one after another: the next once the last has printed its first output,
    or after TURN_S. Two opencode (or kilo) processes starting together can find the one
    local database they share locked ("database is locked", result 72 at once)."""

    def __init__(self, turn_s: float = TURN_S) -> None:
        self._lock = threading.Lock()
        self._turn_s = turn_s

    def take(self) -> Callable[[], None]:
        """Waits for this start's turn; returns the call (any thread, once or more) that
        lets the next start."""
        self._lock.acquire()
        once = threading.Lock()

        def let_next() -> None:
            if once.acquire(blocking=False):
                timer.cancel()
                self._lock.release()

        timer = threading.Timer(self._turn_s, let_next)
        timer.daemon = True
        timer.start()
        return let_next


@dataclass(frozen=True)
class Shared:
    """The run's one of each, owned by the Supervisor, used here on the main thread only."""

    life: Lifecycle
    counters: Counters
    budget: BudgetKeeper
    gates: Gatekeeper
    memory: AttemptMemory
    circular: CircularFixes


@dataclass
class Lane:
    """A slot at work: its feature, its worktree and its own attempt log and runner."""

    slot: int
    file: FeatureFile
    tree: Worktree
    journal: Journal
    runner: IterationRunner
    sent_back: int = 0
    mark: boardmarks.Mark | None = None  # its feature file on the board, while worked
    gate_report: str = ""  # the red gate in its worktree, for its next prompt
    files: FileActivity | None = None  # its worktree's changes (--liveness signals)

    @property
    def feature(self) -> str:
        return self.file.dir_name

    @property
    def feature_id(self) -> str:
        return self.tree.feature_id

    @property
    def feature_file(self) -> str:
        return f".automaker/features/{self.feature}/feature.json"


@dataclass(frozen=True)
class Ran:
    lane: Lane
    attempt: Attempt | None
    error: BaseException | None = None
    done: bool = False  # its feature says done in its worktree
    gate: GateVerdict | None = None  # the gate in its worktree, when done (and a gate is set)

    @property
    def queued(self) -> bool:
        """Done, and the gate in its worktree ran to its end without a new failure."""
        return self.done and (self.gate is None or (self.gate.complete and not self.gate.red))


class Slots:
    def __init__(self, plan: RunPlan, trees: Worktrees, journal: Journal, clock: Clock,
                 run_attempt: RunAttempt, shared: Shared) -> None:
        self.plan = plan
        self.trees = trees
        self.journal = journal
        self.clock = clock
        self._run_attempt = run_attempt
        self.shared = shared
        self.queue = MergeQueue(trees, lambda _root: shared.gates.merged(self._merging))
        self._merging = 0  # the attempt whose merge the gate judges (its gate log's number)
        self._lanes: dict[int, Lane] = {}
        self._running: set[int] = set()
        self._done: queue.Queue[Ran] = queue.Queue()
        self._sent_back: dict[str, int] = {}  # by feature id, this run
        self._given_up: set[str] = set()  # ids sent back too often: left to the single loop
        self._error: BaseException | None = None
        self._turns = StartTurns()

    # -- the coordinator -------------------------------------------------------------------
    def run(self, state: PhaseState) -> tuple[End | None, int]:
        """Work every feature that can be worked at once; (the end, when the run or phase
        ends, else None; the attempts run). The single loop goes on after it: the completion
        review, features no slot may take."""
        self.shared.gates.before_attempt(self.shared.counters.next_number)  # the baseline
        ran, end = 0, None
        while True:
            if end is None:
                end = self._may_start(state)
            if end is None:
                self._fill(state)
            if not self._running:
                break
            finished = self._finish(state, self._done.get())
            ran += 1
            end = end or finished  # the first end stands (a budget, then a later .stop)
        self._close_lanes()
        if self._error is not None:
            raise self._error
        return end, ran

    def _may_start(self, state: PhaseState) -> End | None:
        limit = self.plan.settings.max_iterations
        if limit is not None and state.index + len(self._running) >= limit:
            return PhaseEnd.MAX_ITERATIONS
        return (self.shared.life.stop_requested() or self.shared.budget.check(
            self.shared.counters))

    def _fill(self, state: PhaseState) -> None:
        free = [n for n in range(1, self.plan.settings.parallel + 1) if n not in self._lanes]
        if free:
            taken = {lane.feature_id for lane in self._lanes.values()}
            files = load_features(self.plan.paths, validate=False)
            for slot, file in zip(free, next_features(
                    files, len(free), Busy(taken, self._given_up), self.plan.feature_filter),
                    strict=False):
                with contextlib.suppress(WorktreeError):  # said in _open; tried again later
                    self._lanes[slot] = self._open(slot, file)
        limit = self.plan.settings.max_iterations
        for lane in [lane for lane in self._lanes.values() if lane.slot not in self._running]:
            if limit is not None and state.index + len(self._running) >= limit:
                break
            self._start(state, lane)

    def _open(self, slot: int, file: FeatureFile) -> Lane:
        assert file.feature is not None  # the scheduler takes valid files only
        try:
            tree = self.trees.create(file.feature.id)
            self.trees.seed(tree)
            for other in self._lanes.values():  # their marks are the board's, not the branch's
                if other.mark is not None:
                    boardmarks.unmarked_copy(tree.path, other.mark)
        except WorktreeError as exc:
            self.journal.warn(f"parallel: no worktree for {file.dir_name}: {exc}")
            self._given_up.add(file.feature.id)
            raise
        events = self.journal.events.tagged(slot=slot, feature=file.dir_name)
        journal = Journal(self.journal.console, events, self.clock, self.plan.paths.root,
                          tag=f"[slot {slot}] ")
        store = CheckpointStore.of_worktree(tree.path, tree.git_dir, self.trees.common,
                                            self.plan.settings.environ)
        store.run_id = events.run_id
        files = self._watch(tree)
        runner = IterationRunner(self.plan, journal, self.shared.life.interrupt, self.clock,
                                 self._run_attempt, deadline_s=self.shared.budget.deadline_s,
                                 files=lambda: files, recall=self.shared.memory.recall,
                                 tree=ProjectPaths(tree.path), store=store,
                                 live=self.shared.life.live,
                                 status=self.shared.life.status_file)
        runner.start_turn = self._turns.take
        events.emit("slot_start", branch=tree.branch, path=str(tree.path))
        self.journal.say(f"slot {slot}: {file.dir_name} on {tree.branch} in {tree.path}")
        lane = Lane(slot, file, tree, journal, runner, files=files)
        runner.gate_report = lambda: lane.gate_report
        lane.mark = boardmarks.mark(self.plan.paths.root, lane.feature_file, tree.branch)
        return lane

    def _watch(self, tree: Worktree) -> FileActivity | None:
        """The worktree's file changes, a sign of its agent's life, as the run's watch of the
        project is with one agent (the worktree is outside the project: that watch misses it)."""
        if self.plan.settings.liveness != "signals":
            return None
        files = FileActivity(tree.path, self.clock.monotonic)
        files.start()
        return files

    def _start(self, state: PhaseState, lane: Lane) -> None:
        others = tuple(sorted(o.feature for o in self._lanes.values() if o is not lane))
        lane.runner.parallel = ParallelInfo(lane.feature, lane.feature_id, others)
        # The iteration this attempt is, counted as one agent counts them (its header and
        # iteration_start): those ended, those running, then this one.
        mine = replace(state, index=state.index + len(self._running) + 1)
        number = self.shared.counters.take_number()
        self._running.add(lane.slot)
        threading.Thread(target=self._work, args=(lane, mine, number),
                         name=f"aidd-slot-{lane.slot}", daemon=True).start()

    def _work(self, lane: Lane, state: PhaseState, number: int) -> None:
        """A slot's thread: one attempt, its end handed to the coordinator."""
        try:
            self._done.put(self._ended(lane, lane.runner.run(state, number, False, None)))
        except BaseException as exc:  # the coordinator raises it once every slot has ended
            self._done.put(Ran(lane, None, exc))

    def _ended(self, lane: Lane, attempt: Attempt) -> Ran:
        """Still on the slot's thread: the work committed on its branch, then, when its feature
        says done, the gate in its worktree (so a long gate holds up no other slot; the gate's
        own files are never in that commit)."""
        if attempt.rate_limited:  # tried again as it was
            return Ran(lane, attempt)
        try:
            self.queue.commit(lane.tree, attempt.number)
        except WorktreeError as exc:
            lane.journal.warn(f"parallel: the work of {lane.feature} not committed: {exc}")
        if not self._finished(lane):
            return Ran(lane, attempt)
        return Ran(lane, attempt, done=True, gate=self.shared.gates.in_worktree(
            attempt.number, lane.tree.path, lane.journal))

    # -- after an attempt ----------------------------------------------------------------------
    def _finish(self, state: PhaseState, ran: Ran) -> End | None:
        lane, attempt = ran.lane, ran.attempt
        self._running.discard(lane.slot)
        if attempt is None:
            self._error = self._error or ran.error
            self._close(lane)
            return STOPPED  # no slot starts again; raised once the others have ended
        shared, journal = self.shared, lane.journal
        shared.budget.spent(attempt, shared.counters)
        if attempt.rate_limited:  # every slot waits: the coordinator sleeps
            end = decisions.sleep_for_rate_limit(self.plan, journal, shared.life,
                                                 shared.counters, attempt)
            self._collect(lane)
            return end or shared.budget.check(shared.counters)
        end = decisions.count(self.plan.settings, journal, shared.counters, attempt)
        state.index += 1
        paths, work = self.plan.paths, work_of(state.phase, attempt.selection.kind)
        failures = ran.gate.new_failures if ran.gate is not None else ()
        if ran.gate is not None:  # else the last one's stands, as the single loop's does
            lane.gate_report = ran.gate.summary()
        shared.memory.remember(work, lane.feature, summarise(
            attempt, failures, paths.root, paths.log(attempt.number)))
        if shared.circular.after(attempt, failures):
            shared.memory.set_aside = shared.circular.lines()
        if lane.feature in shared.circular.set_aside:
            self._close(lane)
        elif ran.queued:
            self._merge(lane, attempt.number, work)
        elif ran.done:  # the feature stays with the slot, its next attempt in this worktree
            why = "has new failures (its next attempt is told)" if failures else "was stopped"
            journal.say(f"{lane.tree.branch} not queued: the gate in its worktree {why}", "WARN")
        self._collect(lane)
        return end

    def _finished(self, lane: Lane) -> bool:
        """The slot's feature is done in its worktree (its agent's verdict)."""
        found = load_file(str(lane.tree.path / lane.feature_file), str(lane.tree.path))
        return found is not None and featurestate.is_done(found.data)

    def _merge(self, lane: Lane, number: int, work: Work) -> None:
        self._merging = number
        mark = lane.mark  # a person's board edit meanwhile outlives the carry-back
        self._unmark(lane)  # a local change would refuse the merge that brings the file
        self.queue.enqueue(Finished(lane.tree, lane.feature_file, mark))
        for report in self.queue.drain():
            self._merged(lane, number, work, report)
        self._close(lane)

    def _merged(self, lane: Lane, number: int, work: Work, report: MergeReport) -> None:
        lane.journal.events.emit("merge", number=number, branch=lane.tree.branch,
                                 result=report.end.value,
                                 reason=report.end.value if report.sent_back else None,
                                 why=report.why or None, commit=report.commit or None)
        if not report.sent_back:
            lane.journal.say(f"merged {lane.tree.branch} into the project"
                             + (f" ({report.why})" if report.why else ""))
            return
        lane.journal.say(f"{lane.tree.branch} sent back ({report.end.value}): {report.why}",
                         "WARN")
        self.shared.memory.remember(work, lane.feature, merge_refused(
            number, report.end.value, report.why, lane.tree.branch,
            self.trees.resolve("HEAD")[:12] or "HEAD"))
        count = self._sent_back[lane.feature_id] = self._sent_back.get(lane.feature_id, 0) + 1
        if count >= max(1, self.plan.settings.max_attempts_per_feature or 3):
            self._given_up.add(lane.feature_id)
            lane.journal.warn(f"parallel: {lane.feature} sent back {count} times; no slot "
                              f"takes it again this run (its branch {lane.tree.branch} stays)")

    # -- lanes ---------------------------------------------------------------------------------
    def _collect(self, lane: Lane) -> None:
        """The lane's attempt log closed, and handed to the run's cleaning."""
        lane.journal.close_log()
        self.journal.logs_written.extend(lane.journal.logs_written)
        lane.journal.logs_written.clear()

    def _close(self, lane: Lane) -> None:
        """The lane's worktree removed (its work is committed on its branch, which stays)."""
        self._lanes.pop(lane.slot, None)
        self._unmark(lane)
        self._collect(lane)
        if lane.files is not None:
            lane.files.close()
        try:
            self.trees.remove(lane.tree)
        except WorktreeError as exc:
            self.journal.warn(f"parallel: worktree {lane.tree.path} not removed: {exc}")

    def _unmark(self, lane: Lane) -> None:
        if lane.mark is not None:
            boardmarks.unmark(self.plan.paths.root, lane.mark)
            lane.mark = None

    def _close_lanes(self) -> None:
        """At a stop: every lane's work is on its branch; the branches stay, named."""
        kept = [lane.tree.branch for lane in self._lanes.values()]
        for lane in list(self._lanes.values()):
            self._close(lane)
        try:
            self.trees.drop_queue()
        except WorktreeError as exc:
            self.journal.warn(f"parallel: the merge queue's worktree not removed: {exc}")
        if kept:
            self.journal.say(f"parallel: unfinished work kept on {', '.join(kept)}")
