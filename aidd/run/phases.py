"""A run's phases (main, audits, post-completion audits, remediation) and how each one ends.

Values only: the loop in `supervisor.py` makes them, the header, prompt context and decisions
read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from aidd.audits.definitions import AuditDefinition
from aidd.prompts.context import InvalidFinding


class PhaseKind(Enum):
    MAIN = "main"
    AUDIT = "audit"
    POST_COMPLETION_AUDIT = "post_completion_audit"
    REMEDIATION = "remediation"

    @property
    def title(self) -> str:
        """The phase's name in prompts (`phase.name`) and log headers."""
        return "post-completion audit" if self is PhaseKind.POST_COMPLETION_AUDIT else self.value

    @property
    def audits(self) -> bool:
        return self in (PhaseKind.AUDIT, PhaseKind.POST_COMPLETION_AUDIT)


class PhaseEnd(Enum):
    """Why a phase ended without ending the run (`phase_end.reason`)."""

    MAX_ITERATIONS = "max_iterations"
    STUCK = "stuck"
    MODE_DONE = "mode_done"
    COMPLETION_CONFIRMED = "completion_confirmed"
    FINDINGS_FIXED = "findings_fixed"
    AWAITING_REVIEW = "awaiting_review"  # all that is left waits for a person (issue 18)


@dataclass(frozen=True)
class Phase:
    kind: PhaseKind
    audit: AuditDefinition | None = None
    index: int = 1  # this audit's place in the queue, from 1
    total: int = 1  # audits in the queue
    cycle: int | None = None  # remediation cycle, from 1

    @property
    def label(self) -> str:
        name = self.audit.name if self.audit else ""
        match self.kind:
            case PhaseKind.MAIN:
                return "main"
            case PhaseKind.AUDIT if self.total == 1:
                return f"audit: {name}"
            case PhaseKind.AUDIT:
                return f"audit {self.index} of {self.total}: {name}"
            case PhaseKind.POST_COMPLETION_AUDIT:
                return f"post-completion audit {self.index} of {self.total}: {name}"
            case PhaseKind.REMEDIATION:
                return f"remediation cycle {self.cycle}"


@dataclass
class PhaseState:
    """What a phase counts while it runs: iterations, iterations without change (stuck), and
    for an audit the reports and findings that were there when it started, so only what this
    phase wrote counts as its result (AUD-22, AUD-23)."""

    phase: Phase
    reports_before: dict[str, tuple[int, int]] = field(default_factory=dict)  # (mtime_ns, size)
    findings_before: dict[str, int] = field(default_factory=dict)  # dir -> mtime_ns
    index: int = 0
    stuck: int = 0
    stuck_numbers: tuple[int, ...] = ()
    invalid_findings: tuple[InvalidFinding, ...] = ()
