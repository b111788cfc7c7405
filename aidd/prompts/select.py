"""The prompt cascade (PRM-1, PRM-2, PRM-3) and the model choice (PRM-30): pure functions."""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple


class PromptKind(Enum):
    DIRECTIVE = "directive"
    AUDIT = "audit"
    TODO = "todo"
    VALIDATE = "validate"
    IN_PROGRESS = "in-progress"
    CODING = "coding"
    ONBOARDING = "onboarding"
    INITIALIZER = "initializer"

    @property
    def template(self) -> str:
        return f"{self.value}.md"

    @property
    def takes_filter_preamble(self) -> bool:
        """Filters reach only these prompts (PRM-22, FEA-40)."""
        return self in _FILTER_KINDS

    @property
    def model_role(self) -> ModelRole:
        return _MODEL_ROLES[self]


class ModelRole(Enum):
    INIT = "init"
    CODE = "code"
    AUDIT = "audit"


_FILTER_KINDS = frozenset(
    {PromptKind.DIRECTIVE, PromptKind.VALIDATE, PromptKind.IN_PROGRESS, PromptKind.CODING}
)
_MODEL_ROLES = {
    PromptKind.DIRECTIVE: ModelRole.CODE,
    PromptKind.AUDIT: ModelRole.AUDIT,
    PromptKind.TODO: ModelRole.INIT,
    PromptKind.VALIDATE: ModelRole.INIT,
    PromptKind.IN_PROGRESS: ModelRole.INIT,
    PromptKind.CODING: ModelRole.CODE,
    PromptKind.ONBOARDING: ModelRole.INIT,
    PromptKind.INITIALIZER: ModelRole.INIT,
}


class Mode(Enum):
    """What the user asked the run to do; one wins when several flags are given (PRM-3)."""

    DIRECTIVE = "directive"
    AUDIT = "audit"
    TODO = "todo"
    VALIDATE = "validate"
    IN_PROGRESS = "in-progress"
    DEFAULT = "default"

    @property
    def flag(self) -> str:
        return "--prompt" if self is Mode.DIRECTIVE else f"--{self.value}"


def choose_mode(*, directive: bool, audit: bool, todo: bool, validate: bool,
                in_progress: bool) -> tuple[Mode, str | None]:
    """The winning mode, in the cascade's order, and the one start-up line PRM-3 asks for when
    several mode flags compete (else None)."""
    given = [mode for mode, on in ((Mode.DIRECTIVE, directive), (Mode.AUDIT, audit),
                                   (Mode.TODO, todo), (Mode.VALIDATE, validate),
                                   (Mode.IN_PROGRESS, in_progress)) if on]
    if not given:
        return Mode.DEFAULT, None
    if len(given) == 1:
        return given[0], None
    names = ", ".join(m.flag for m in given)
    return given[0], f"several mode flags given ({names}); {given[0].flag} wins"


class CascadeState(NamedTuple):
    """Everything the cascade looks at: the run's mode and this iteration's facts."""

    mode: Mode = Mode.DEFAULT
    audit_phase: bool = False
    remediation: bool = False  # a remediation coding phase (AUD-40)
    completion_pending: bool = False  # .automaker/.project_completion_pending exists
    onboarding_complete: bool = False  # features, app_spec.txt, CHANGELOG.md (LAY-17)
    existing_codebase: bool = False  # recorded origin is `existing` (LAY-16)


class Selection(NamedTuple):
    kind: PromptKind
    reason: str  # why this kind won, for the header and events (PRM-4)
    completion_review: bool = False
    remediation: bool = False

    @property
    def model_role(self) -> ModelRole:
        return self.kind.model_role



def select_prompt(state: CascadeState) -> Selection:
    """Which prompt this iteration sends: the rules below in order, the first match wins;
    remediation comes first (PRM-1, PRM-2)."""
    mode = state.mode
    rows = (
        (state.remediation, Selection(PromptKind.CODING, "remediation phase", remediation=True)),
        (mode is Mode.DIRECTIVE, Selection(PromptKind.DIRECTIVE, "--prompt")),
        (state.audit_phase, Selection(PromptKind.AUDIT, "audit phase")),
        (
            state.completion_pending,
            Selection(PromptKind.TODO, "completion review", completion_review=True),
        ),
        (mode is Mode.TODO, Selection(PromptKind.TODO, "--todo")),
        (mode is Mode.VALIDATE, Selection(PromptKind.VALIDATE, "--validate")),
        (mode is Mode.IN_PROGRESS, Selection(PromptKind.IN_PROGRESS, "--in-progress")),
        (state.onboarding_complete, Selection(PromptKind.CODING, "onboarding complete")),
        (
            state.existing_codebase,
            Selection(PromptKind.ONBOARDING, "existing codebase, onboarding not complete"),
        ),
    )
    return next(
        (selection for matched, selection in rows if matched),
        Selection(PromptKind.INITIALIZER, "new project"),
    )


class ModelOptions(NamedTuple):
    """`--model`, `--init-model`, `--code-model`, `--audit-model`; empty means not given."""

    model: str | None = None
    init_model: str | None = None
    code_model: str | None = None
    audit_model: str | None = None


def choose_model(role: ModelRole, options: ModelOptions) -> str | None:
    """The model a prompt of `role` runs with (PRM-30). None means: pass no model flag, the CLI
    uses its default."""
    code = options.code_model or options.model or None
    match role:
        case ModelRole.INIT:
            return options.init_model or options.model or None
        case ModelRole.CODE:
            return code
        case ModelRole.AUDIT:
            return options.audit_model or code
