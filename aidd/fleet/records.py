"""The values that travel through Temporal: a project's job, its progress and its result.

Plain frozen dataclasses of JSON types (the SDK's default converter), shared by the workflow
(inside the sandbox), the activity and `aidd fleet status`.

No `from __future__ import annotations` here: the SDK decodes each heartbeat into a `Progress`
through typing.get_type_hints, which evaluates string annotations again on every call (0.73 ms
against 0.19 ms a decode, measured): `aidd fleet watch` decodes one per running project every
2 s (a status query of 20 running projects: 28.6 ms of CPU before, 23.8 ms after).
"""

from dataclasses import dataclass, field
from enum import StrEnum

from aidd.errors import ExitCode

TASK_QUEUE = "aidd-fleet"
WORKFLOW_TYPE = "AiddProject"
POOL_WORKFLOW_TYPE = "AiddPool"
CONFIG_ERROR = "AiddConfigError"  # the non-retryable error type: exit 2, 3, 7 or 8
CONFIG_EXITS = (ExitCode.INVALID_ARGS, ExitCode.NOT_FOUND, ExitCode.VALIDATION_ERROR,
                ExitCode.CLI_ERROR)
COMPLETE_EXITS = (ExitCode.SUCCESS, ExitCode.PROJECT_COMPLETE)
STOPPED_EXITS = (ExitCode.ABORTED, ExitCode.TIMEOUT_OR_SIGNAL)
ENDS_KEPT = 20


class State(StrEnum):
    """A project as `aidd fleet status` shows it."""

    QUEUED = "queued"  # waiting for a slot in its credential pool
    RUNNING = "running"
    RETRYING = "retrying"  # an attempt failed or its worker was lost; another comes
    DONE = "done"  # aidd ended 0
    COMPLETE = "complete"  # aidd ended 73: the project is complete
    STOPPED = "stopped"  # 6 (stop) or 124 (signal)
    BUDGET = "budget"  # 9: a budget ran out
    FAILED = "failed"  # a configuration error (not retried), or retries used up


@dataclass(frozen=True)
class ProjectJob:
    """One project of a fleet, as its workflow and activity need it."""

    fleet: str
    name: str
    path: str  # the project directory on the worker (a local path or the checkout's place)
    git: str  # a URL to clone into a per-worker checkout, or ""
    branch: str
    cli: str
    args: list[str]
    pool: str  # the credential pool, or "" for none
    env: dict[str, str] = field(default_factory=dict)
    slots: int = 1  # the pool slots its run holds: its `--parallel N` (N agents at once)
    heartbeat_s: float = 30.0
    max_attempts: int = 3

    @property
    def workflow_id(self) -> str:
        return project_workflow_id(self.fleet, self.name)


@dataclass(frozen=True)
class Progress:
    """What the run's events.jsonl said so far (heartbeat details, carried across retries)."""

    offset: int = 0  # bytes of events.jsonl read
    last_event: str = ""
    iteration: int = 0  # the last iteration_start's number
    result: int | None = None  # the last iteration_end's result
    cost_usd: float = 0.0  # summed over the iterations seen by the fleet
    features_passing: int | None = None
    features_total: int | None = None
    host: str = ""
    pid: int = 0  # aidd's pid on `host`
    attempt: int = 0  # the activity's attempt (retries)
    ended: int = 0  # iteration_end events seen: the moments a git project's work is pushed
    cut: int = 0  # of them, iterations aidd cut off on a signal (a lost worker, stop --now)
    last_ended: int = 0  # the number of the last iteration that ended
    pushed: str = ""  # a git project: the last commit this run pushed to its branch
    # What `aidd fleet report` needs of a run whose events.jsonl are on other machines
    # (summed over the attempts, on every worker; JSON types: result keys are strings):
    by_result: dict[str, int] = field(default_factory=dict)  # iteration_end result -> count
    costs_unknown: int = 0  # iteration_end events whose cost_usd was null
    tokens: int = 0  # the iterations' tokens, all kinds summed (as aidd's --max-tokens)
    started_at: str = ""  # when the run's first attempt started aidd (ISO): its wall time
    hosts: list[str] = field(default_factory=list)  # each host that ran an attempt, in order
    root: str = ""  # the project directory on `host` (its events.jsonl is `offset`'s file)
    last_end_at: str = ""  # `ts` of the last iteration_end or run_end
    run_id: str = ""  # the last aidd run's id (run_start's `run`)
    run_reason: str = ""  # its run_end `reason` once it ended, else ""
    end_checkpoint: str = ""  # the commit of aidd's last `NNN-end` checkpoint (exact tree)
    end_checkpoint_of: int = 0  # its attempt's number NNN
    # The last ENDS_KEPT iteration_ends, oldest first, as "N COMMIT" (COMMIT: its `N-end`
    # checkpoint, "" without one): each is published as its own commit, however close together
    # they ended. The last of them is iteration_end number `ended`.
    ends: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ProjectResult:
    """How a project's workflow ended."""

    state: State
    exit_code: int | None
    progress: Progress
    message: str = ""


@dataclass
class PoolState:
    """A credential pool's semaphore: its cap, who holds a slot, who waits (in order)."""

    cap: int = 1
    holders: list[str] = field(default_factory=list)
    queue: list[str] = field(default_factory=list)
    slots: dict[str, int] = field(default_factory=dict)  # a requester's slots when not 1

    def needs(self, requester: str) -> int:
        return self.slots.get(requester, 1)

    def held(self) -> int:
        return sum(self.needs(h) for h in self.holders)


def project_workflow_id(fleet: str, name: str) -> str:
    """The fleet-wide lock of a project: one running workflow per id."""
    return f"aidd-fleet/{fleet}/{name}"


def pool_workflow_id(fleet: str, pool: str) -> str:
    return f"aidd-fleet/{fleet}/pool/{pool}"


def state_for_exit(code: int) -> State:
    if code in COMPLETE_EXITS:
        return State.COMPLETE if code == ExitCode.PROJECT_COMPLETE else State.DONE
    if code in STOPPED_EXITS:
        return State.STOPPED
    if code == ExitCode.BUDGET_EXHAUSTED:
        return State.BUDGET
    return State.FAILED
